import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { spawnServe, type ServeProcess } from './helpers/processes.ts';

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('headless console listener (section 9)', () => {
  let server: ServeProcess;
  before(async () => {
    server = await spawnServe(mkdtempSync(join(tmpdir(), 'sb-console-')));
  });
  after(async () => {
    server.child.kill('SIGTERM');
    await server.exit();
  });

  it('binds 127.0.0.1 and prints a URL with a token', () => {
    assert.match(server.console, /^http:\/\/127\.0\.0\.1:\d+\/\?token=/);
  });

  it('refuses requests without the token, or with a wrong one', async () => {
    const base = server.console.split('?')[0]!;
    assert.equal((await get(base)).status, 401);
    assert.equal((await get(`${base}?token=wrong`)).status, 401);
    assert.equal((await get(`${base}api/events`, { authorization: 'Bearer nope' })).status, 401);
  });

  it('refuses a Host that is not a loopback name (DNS rebinding), even with the token', async () => {
    const r = await get(server.console, { host: 'attacker.example:80' });
    assert.equal(r.status, 421);
    assert.equal((await get(server.console, { host: 'localhost' })).status === 421, false);
  });

  it('the token URL sets an HttpOnly cookie that then authorizes the API', async () => {
    const first = await get(server.console);
    assert.notEqual(first.status, 401);
    const cookie = String(first.headers['set-cookie']).split(';')[0]!;
    assert.match(String(first.headers['set-cookie']), /HttpOnly; SameSite=Strict/);
    const status = await fetch(server.console.split('?')[0]! + 'api/status', { method: 'POST', headers: { cookie } });
    assert.equal(status.status, 200);
    assert.deepEqual(((await status.json()) as { ok: boolean; value: { endpoint: string } }).value.endpoint, server.endpoint);
  });

  it('keeps its token across restarts, so a bookmarked console URL still works', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-console-token-'));
    const a = await spawnServe(dir);
    a.child.kill('SIGTERM');
    await a.exit();
    const b = await spawnServe(dir);
    assert.equal(new URL(b.console).searchParams.get('token'), new URL(a.console).searchParams.get('token'));
    b.child.kill('SIGTERM');
    await b.exit();
  });
});
