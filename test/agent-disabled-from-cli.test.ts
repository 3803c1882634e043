import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliAsync, spawnServe, type ServeProcess } from './helpers/processes.ts';

/** A sign-in route or console call over HTTP, as the page makes it. */
async function post(base: string, path: string, body: unknown, token?: string): Promise<{ status: number; json: { ok: boolean; value: { token: string }; error?: { code: string } } }> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as { ok: boolean; value: { token: string }; error?: { code: string } } };
}

describe('agents from the CLI while serve runs (team mode)', () => {
  let server: ServeProcess;
  let dataDir: string;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sb-agents-cli-'));
    server = await spawnServe(dataDir);
  });
  after(async () => {
    server.child.kill('SIGTERM');
    await server.exit();
  });

  it('an agent added by the CLI signs in through its link; a disable from the CLI closes their open event stream and refuses their next call within about a second', async () => {
    const base = server.consoleBase.replace(/\/$/, '');
    const added = await cliAsync(dataDir, 'agents', 'add', 'ann', '--name', 'Ann Lee', '--origin', base);
    assert.equal(added.status, 0, added.stderr);
    const link = /^sign-in link: (\S+)$/m.exec(added.stdout)![1]!;
    assert.ok(link.startsWith(`${base}/#sign-in-link=`), link);
    const chosen = await post(base, '/api/auth/usePasswordLink', { link: link.split('#sign-in-link=')[1], password: 'a long enough passphrase' });
    assert.equal(chosen.status, 200, JSON.stringify(chosen.json));
    const token = chosen.json.value.token;
    assert.deepEqual((await post(base, '/api/whoAmI', {}, token)).json.value, { account: { id: 'ann', name: 'Ann Lee' }, role: 'agent', owner: false });

    const stream = await fetch(`${base}/api/events`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(stream.status, 200);
    const reader = stream.body!.getReader();
    assert.match(new TextDecoder().decode((await reader.read()).value), /: connected/);
    // The stream's end, whenever it comes: nothing here sleeps.
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return Date.now();
    })();

    const disabled = await cliAsync(dataDir, 'agents', 'disable', 'ann');
    const committedAt = Date.now();
    assert.equal(disabled.status, 0, disabled.stderr);
    assert.match(disabled.stdout, /agent ann disabled; 1 session ended/);
    const closedAfter = (await ended) - committedAt;
    // Sessions are checked against the database every second (the CLI is another process): at most two checks' time.
    assert.ok(closedAfter < 2_500, `the stream closed ${closedAfter} ms after the CLI's change`);
    const next = await post(base, '/api/listConversations', {}, token);
    assert.equal(next.status, 401);
    assert.equal(next.json.error?.code, 'unauthorized');
    console.log(`# stream closed ${closedAfter} ms after the CLI disabled the agent`);

    // Enabled again, the old session stays ended: the agent signs in anew with their password.
    assert.equal((await cliAsync(dataDir, 'agents', 'enable', 'ann')).status, 0);
    assert.equal((await post(base, '/api/whoAmI', {}, token)).status, 401);
    const again = await post(base, '/api/auth/signIn', { id: 'ann', password: 'a long enough passphrase' });
    assert.equal(again.status, 200);
    const list = await cliAsync(dataDir, 'agents', 'list');
    assert.match(list.stdout, /^ann\s+Ann Lee\s+agent\s+5\s+active\s+\S+Z\s+1$/m);
  });
});
