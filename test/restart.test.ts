import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServe, cli, secretFrom } from './helpers/processes.ts';
import { signBody } from './helpers/sign.ts';

const now = () => Math.floor(Date.now() / 1000);

async function send(endpoint: string, secret: string, info: Record<string, unknown>) {
  const r = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signBody('acme', secret, info, now())),
  });
  return { status: r.status, headers: r.headers, body: (await r.json()) as Record<string, unknown> };
}

const msg = (id: string) => ({ event_type: 'auto_dialog', msg_id: id, from_user_id: `cust-${id}`, from_user_type: 2, content: `message ${id}` });

describe('restart durability (separate processes, same data dir)', () => {
  it('serve prints its endpoint and console lines; SIGTERM finishes in-flight requests and exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-restart-'));
    const secret = secretFrom(cli(dir, 'clients', 'add', 'acme', '--send-url', 'http://127.0.0.1:9/hook').stdout);
    const server = await spawnServe(dir);
    assert.match(server.endpoint, /^http:\/\/127\.0\.0\.1:\d+\/custom-im\/chat-messages$/);
    assert.match(server.console, /^http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]{20,}$/);
    const inFlight = Array.from({ length: 50 }, (_, i) => send(server.endpoint, secret, msg(`t${i}`)).catch(() => null));
    await new Promise((r) => setTimeout(r, 5));
    server.child.kill('SIGTERM');
    const answered = (await Promise.all(inFlight)).filter((r) => r !== null);
    assert.equal(await server.exit(), 0, server.stderr());
    assert.ok(answered.every((r) => r.status === 200), 'no request was cut off with an error');

    const again = await spawnServe(dir);
    for (const r of answered) {
      const replay = await send(again.endpoint, secret, msg(String(r.body['msg_id'])));
      assert.equal(replay.headers.get('idempotent-replayed'), 'true', 'every acknowledged message is still there');
      assert.deepEqual(replay.body, r.body);
    }
    again.child.kill('SIGINT');
    assert.equal(await again.exit(), 0);
  });

  it('every acknowledged message survives SIGKILL (synchronous=FULL, committed before the answer)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-kill-'));
    const secret = secretFrom(cli(dir, 'clients', 'add', 'acme', '--send-url', 'http://127.0.0.1:9/hook').stdout);
    const server = await spawnServe(dir);
    const acknowledged: Array<Record<string, unknown>> = [];
    const senders = Array.from({ length: 20 }, async (_, worker) => {
      for (let i = 0; ; i++) {
        try {
          const r = await send(server.endpoint, secret, msg(`k${worker}-${i}`));
          if (r.status === 200) acknowledged.push(r.body);
        } catch {
          return;
        }
      }
    });
    await new Promise((r) => setTimeout(r, 400));
    server.child.kill('SIGKILL');
    await Promise.all(senders);
    await server.exit();
    assert.ok(acknowledged.length > 20, `load ran (${acknowledged.length} acknowledged)`);

    const again = await spawnServe(dir);
    let missing = 0;
    for (const body of acknowledged) {
      const replay = await send(again.endpoint, secret, msg(String(body['msg_id'])));
      if (replay.headers.get('idempotent-replayed') !== 'true') missing++;
    }
    assert.equal(missing, 0, `${missing} of ${acknowledged.length} acknowledged messages were lost`);
    again.child.kill('SIGTERM');
    await again.exit();
  });

  it('a bad flag or an unusable port is a one-line error, not a stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-flags-'));
    await assert.rejects(spawnServe(dir, ['--port', 'abc']), /--port must be a port number/);
    await assert.rejects(spawnServe(dir, ['--bogus']), /Unknown option '--bogus'/);
  });
});
