import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { get as httpGet, request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { openDatabase } from '../src/main/store/db.ts';
import { createStore } from '../src/main/store/index.ts';
import { databasePath } from '../src/main/store/data-dir.ts';
import { spawnServe, cliAsync, type ServeProcess } from './helpers/processes.ts';
import { eventually } from './helpers/receiver.ts';

function get(url: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { headers, method }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    })
      .on('error', reject)
      .end(body);
  });
}

/** The printed console URL, split: the address and the token from its fragment. */
const parts = (s: ServeProcess): { base: string; token: string } => ({ base: s.consoleBase, token: s.consoleToken });

const apiStatus = (base: string, headers: Record<string, string>) => get(`${base}api/status`, { 'content-type': 'application/json', ...headers }, 'POST', '{}');

describe('headless console listener (section 9)', () => {
  let server: ServeProcess;
  let dir: string;
  /** Every serve started here, stopped in `after` even when an assertion failed midway. */
  const started: ServeProcess[] = [];
  const serve = async (d: string): Promise<ServeProcess> => {
    const s = await spawnServe(d);
    started.push(s);
    return s;
  };
  const stop = async (s: ServeProcess): Promise<void> => {
    if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
    await s.exit();
  };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-console-'));
    server = await serve(dir);
  });
  after(async () => {
    await Promise.all(started.map(stop));
  });

  it('binds 127.0.0.1 and prints the token in the URL fragment, never in the query', () => {
    assert.match(server.console, /^http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]{43}$/);
  });

  it('the page loads without a token; the API refuses requests without it, with a wrong one, in a cookie or in the query', async () => {
    const { base, token } = parts(server);
    const page = await get(base);
    assert.ok([200, 503].includes(page.status), `the page is public build output (got ${page.status})`);
    assert.equal(page.headers['set-cookie'], undefined);
    assert.equal((await apiStatus(base, {})).status, 401);
    assert.equal((await apiStatus(base, { authorization: 'Bearer wrong' })).status, 401);
    assert.equal((await apiStatus(base, { cookie: `sb_console=${token}` })).status, 401);
    assert.notEqual((await get(`${base}api/status?token=${token}`, { 'content-type': 'application/json' }, 'POST', '{}')).status, 200);
    assert.equal((await get(`${base}api/events`, { authorization: 'Bearer nope' })).status, 401);
  });

  it('refuses a Host that is not a loopback name (DNS rebinding), even with the token', async () => {
    const { base, token } = parts(server);
    assert.equal((await apiStatus(base, { authorization: `Bearer ${token}`, host: 'attacker.example:80' })).status, 421);
    assert.equal((await apiStatus(base, { authorization: `Bearer ${token}`, host: 'localhost' })).status, 200);
  });

  it('Authorization: Bearer with the printed token authorizes the API', async () => {
    const { base, token } = parts(server);
    const status = await fetch(`${base}api/status`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(status.status, 200);
    assert.equal(status.headers.get('set-cookie'), null);
    assert.deepEqual(((await status.json()) as { ok: boolean; value: { endpoint: string } }).value.endpoint, server.endpoint);
  });

  it('stores the token only as a hash', () => {
    const { token } = parts(server);
    const store = createStore(openDatabase(databasePath(dir)));
    const rows = JSON.stringify(store.connection.prepare('SELECT key, value FROM settings').all());
    store.close();
    assert.ok(!rows.includes(token), rows);
  });

  it('a client that aborts mid-body is one info line on stderr, not a stack trace', async () => {
    const { base, token } = parts(server);
    const url = new URL(base);
    const before = server.stderr();
    await new Promise<void>((resolve) => {
      const socket = connect(Number(url.port), '127.0.0.1', () => {
        socket.write(`POST /api/saveKb HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"q`);
        setTimeout(() => socket.destroy(), 50);
      });
      socket.on('close', () => resolve());
    });
    const added = await eventually(() => server.stderr().slice(before.length) || false, 'a log line about the aborted request');
    assert.match(added, /^console: POST \/api\/saveKb aborted by the client[^\n]*\n$/);
  });

  it('console rotate-token (CLI) prints a new #token=; the running server refuses the old one from then on', async () => {
    const { base, token: old } = parts(server);
    // A console open with the old token: its event stream must not outlive the token.
    let streamEnded = false;
    const stream = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpGet(`${base}api/events`, { headers: { authorization: `Bearer ${old}` } }, resolve);
      req.on('error', reject);
    });
    assert.equal(stream.statusCode, 200);
    stream.on('data', () => {});
    stream.on('close', () => (streamEnded = true));
    const rotated = await cliAsync(dir, 'console', 'rotate-token');
    assert.equal(rotated.status, 0, rotated.stderr);
    const fresh = /^#token=([A-Za-z0-9_-]{43})$/m.exec(rotated.stdout)?.[1];
    assert.ok(fresh, rotated.stdout);
    assert.match(rotated.stdout, /console address/);
    await eventually(async () => (await apiStatus(base, { authorization: `Bearer ${old}` })).status === 401, 'the old token refused', 3000);
    assert.equal((await apiStatus(base, { authorization: `Bearer ${fresh}` })).status, 200);
    await eventually(() => streamEnded, "the old token's event stream closed by the server", 5000);
    const usage = await cliAsync(dir, 'console', 'rotate');
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /unknown console command "rotate"; use rotate-token/);
  });

  it('keeps its token across restarts, so a bookmarked console URL still works', async () => {
    const d = mkdtempSync(join(tmpdir(), 'sb-console-token-'));
    const a = await serve(d);
    await stop(a);
    const b = await serve(d);
    assert.equal(parts(b).token, parts(a).token);
    assert.equal((await apiStatus(parts(b).base, { authorization: `Bearer ${parts(a).token}` })).status, 200);
    await stop(b);
  });

  it('replaces a plain-text token of an older version by a hashed one; the old token stops working', async () => {
    const d = mkdtempSync(join(tmpdir(), 'sb-console-legacy-'));
    const store = createStore(openDatabase(databasePath(d)));
    store.settings.put('console_token', 'legacy-token-0123456789abcdef');
    store.close();
    const s = await serve(d);
    const { base, token } = parts(s);
    assert.notEqual(token, 'legacy-token-0123456789abcdef');
    assert.match(s.stderr(), /plain text .* replaced/);
    assert.equal((await apiStatus(base, { authorization: 'Bearer legacy-token-0123456789abcdef' })).status, 401);
    assert.equal((await apiStatus(base, { authorization: `Bearer ${token}` })).status, 200);
    await stop(s);
    const after = createStore(openDatabase(databasePath(d)));
    assert.equal(after.settings.get('console_token'), undefined);
    after.close();
  });
});
