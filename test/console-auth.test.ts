import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request, type Server } from 'node:http';
import { connect } from 'node:net';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { startHarness, type Harness } from './helpers/harness.ts';
import { createConsoleServer, CONSOLE_HEADERS_TIMEOUT_MS, CONSOLE_REQUEST_TIMEOUT_MS } from '../src/main/console-api/console-server.ts';
import { consoleTokenAtStart, rotateConsoleToken } from '../src/main/console-api/console-token.ts';
import { secretKeyPath } from '../src/main/store/data-dir.ts';

const execFileAsync = promisify(execFile);

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: { ok: boolean; error?: { code: string; message: string }; value?: unknown } | null;
}

/** Raw node:http, so every header (Host, Origin, Cookie, Sec-Fetch-Site) is exactly what we say. */
function call(base: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        let json: Answer['json'] = null;
        try {
          json = JSON.parse(text) as Answer['json'];
        } catch {
          // a plain-text answer
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('console listener: token, CSRF and robustness rules (section 9)', () => {
  let h: Harness;
  let server: Server;
  let base: string;
  let port: number;
  let token: string;
  const logged: string[] = [];
  const json = (extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', authorization: `Bearer ${token}`, ...extra });
  const status = (headers: Record<string, string>, body = '{}') => call(base, '/api/status', { method: 'POST', headers, body });
  let rendererDir: string;
  /** A console listener on the harness's service; without `timeouts`, the endpoint's own. */
  async function listen(timeouts?: { headersMs: number; requestMs: number; checkEveryMs: number }): Promise<{ server: Server; port: number; base: string }> {
    const s = createConsoleServer({
      rendererDir,
      accounts: h.service.console.accounts,
      handlers: h.service.console.handlers,
      events: h.service.console.events,
      log: (line) => logged.push(line),
      ...(timeouts ? { timeouts } : {}),
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const p = (s.address() as AddressInfo).port;
    return { server: s, port: p, base: `http://127.0.0.1:${p}` };
  }

  before(async () => {
    h = await startHarness();
    token = consoleTokenAtStart(h.service.store.settings, secretKeyPath(h.dataDir)).token;
    rendererDir = mkdtempSync(join(tmpdir(), 'sb-renderer-'));
    mkdirSync(join(rendererDir, 'assets'));
    writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>console</title><script src="/assets/app.js"></script>');
    writeFileSync(join(rendererDir, 'assets', 'app.js'), 'console.log("app")');
    ({ server, port, base } = await listen({ headersMs: 300, requestMs: 600, checkEveryMs: 50 }));
  });
  after(async () => {
    server.closeAllConnections();
    server.close();
    await h.stop();
  });

  it('the page and its assets load without a token (public build output), and no cookie is ever set', async () => {
    const page = await call(base, '/');
    assert.equal(page.status, 200);
    assert.match(page.text, /<title>console<\/title>/);
    assert.equal((await call(base, '/assets/app.js')).status, 200);
    for (const r of [page, await status(json()), await status({})]) assert.equal(r.headers['set-cookie'], undefined);
  });

  it('the API answers only Authorization: Bearer with the right token; 401 otherwise, as data', async () => {
    assert.equal((await status(json())).status, 200);
    for (const headers of [{ 'content-type': 'application/json' }, json({ authorization: 'Bearer wrong' }), json({ authorization: token })]) {
      const r = await status(headers);
      assert.equal(r.status, 401);
      assert.equal(r.json?.error?.code, 'unauthorized');
      assert.match(r.json!.error!.message, /serve printed|rotate-token/);
    }
    assert.equal((await call(base, '/api/events', { headers: { authorization: 'Bearer nope' } })).status, 401);
  });

  it('a cookie never authorizes, whatever its name', async () => {
    for (const cookie of [`sb_console=${token}`, `token=${token}`, `sb_console=${encodeURIComponent(token)}; other=1`]) {
      assert.equal((await status({ 'content-type': 'application/json', cookie })).status, 401, cookie);
    }
  });

  it('a token in the query string never authorizes: refused with a pointer to the fragment', async () => {
    const api = await call(base, `/api/status?token=${token}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.notEqual(api.status, 200);
    assert.equal(api.json?.ok, false);
    const page = await call(base, `/?token=${token}`);
    assert.equal(page.status, 400);
    assert.match(page.text, /#token=/);
  });

  it('state-changing calls need application/json: text/plain, form and multipart bodies get 415 as data', async () => {
    const body = JSON.stringify({ id: 'csrf-client' });
    for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', '']) {
      const r = await call(base, '/api/addClient', { method: 'POST', headers: { authorization: `Bearer ${token}`, ...(type ? { 'content-type': type } : {}) }, body });
      assert.equal(r.status, 415, type);
      assert.deepEqual(r.json?.error?.code, 'unsupported_media_type');
    }
    assert.equal(h.admin.clients.get('csrf-client'), undefined);
    assert.equal((await status(json({ 'content-type': 'application/json; charset=utf-8' }))).status, 200);
  });

  it('an Origin other than the console\'s own gets 403, even with the token; its own origin passes', async () => {
    for (const origin of [`http://127.0.0.1:${port + 1}`, 'http://127.0.0.1', 'null', `http://localhost:${port}`, `https://127.0.0.1:${port}`]) {
      const r = await status(json({ origin }));
      assert.equal(r.status, 403, origin);
      assert.equal(r.json?.error?.code, 'forbidden_origin');
    }
    assert.equal((await status(json({ origin: base }))).status, 200);
    assert.equal((await status(json({ origin: `http://localhost:${port}`, host: `localhost:${port}` }))).status, 200);
    assert.equal((await status(json({ origin: `http://[::1]:${port}`, host: `[::1]:${port}` }))).status, 200);
    for (const site of ['same-site', 'cross-site']) assert.equal((await status(json({ 'sec-fetch-site': site }))).status, 403, site);
    assert.equal((await status(json({ 'sec-fetch-site': 'same-origin', origin: base }))).status, 200);
  });

  it('keeps the loopback Host check (421)', async () => {
    assert.equal((await status(json({ host: 'attacker.example' }))).status, 421);
    assert.equal((await call(base, '/', { headers: { host: `evil.test:${port}` } })).status, 421);
  });

  it('a body over 1 MiB gets 413 as data, and clients that write it all before reading receive it, 20 of 20', async () => {
    // A listener with the endpoint's own time-outs: the shared one's 600 ms request time-out (short
    // so the time-out tests below are quick) cut uploads a loaded machine took longer to send, in the
    // middle of the drain, and fetch then lost the 413 already written to it (CI, 19 of 20).
    const { server: roomy, base } = await listen();
    after(() => {
      roomy.closeAllConnections();
      roomy.close();
    });
    const big = Buffer.alloc(4 * 1024 * 1024, 'a');
    const r = await call(base, '/api/importKb', { method: 'POST', headers: json(), body: big });
    assert.equal(r.status, 413);
    assert.equal(r.json?.error?.code, 'payload_too_large');
    const python = `
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], data=b'a' * (4 * 1024 * 1024), headers={'Content-Type': 'application/json', 'Authorization': 'Bearer ' + sys.argv[2]})
try:
    urllib.request.urlopen(req); print(200)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception as e:
    print(e)
`;
    const got = { fetch: 0, http: 0, urllib: 0 };
    for (let i = 0; i < 20; i++) {
      if ((await fetch(`${base}/api/importKb`, { method: 'POST', headers: json(), body: big }).catch(() => null))?.status === 413) got.fetch++;
      if ((await call(base, '/api/importKb', { method: 'POST', headers: json({ connection: 'close' }), body: big }).catch(() => null))?.status === 413) got.http++;
      const py = await execFileAsync('python3', ['-c', python, `${base}/api/importKb`, token]).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
      if (py.stdout.trim() === '413') got.urllib++;
    }
    assert.deepEqual(got, { fetch: 20, http: 20, urllib: 20 });
    // Any refusal before the body is read drains it the same way.
    for (let i = 0; i < 5; i++) {
      const plainText = await call(base, '/api/importKb', { method: 'POST', headers: json({ 'content-type': 'text/plain', connection: 'close' }), body: big });
      assert.equal(plainText.status, 415);
    }
  });

  it('a rotated token is refused by the running server once it re-reads the hash', async () => {
    const old = token;
    const fresh = await rotateConsoleToken(h.admin.settings, secretKeyPath(h.dataDir));
    h.clock.advance(1000);
    assert.equal((await status(json())).status, 401);
    token = fresh;
    assert.equal((await status(json())).status, 200);
    assert.notEqual(old, fresh);
  });

  it('uses the endpoint\'s header and request time-outs by default', () => {
    const s = createConsoleServer({ rendererDir: '/nonexistent', accounts: h.service.console.accounts, handlers: h.service.console.handlers, events: h.service.console.events });
    assert.equal(s.headersTimeout, CONSOLE_HEADERS_TIMEOUT_MS);
    assert.equal(s.requestTimeout, CONSOLE_REQUEST_TIMEOUT_MS);
    assert.deepEqual([CONSOLE_HEADERS_TIMEOUT_MS, CONSOLE_REQUEST_TIMEOUT_MS], [30_000, 60_000]);
  });

  const rawClose = (payload: string): Promise<{ answer: string; ms: number }> =>
    new Promise((resolve, reject) => {
      const started = Date.now();
      const socket = connect(port, '127.0.0.1', () => socket.write(payload));
      let answer = '';
      socket.on('data', (c: Buffer) => (answer += c.toString()));
      socket.on('close', () => resolve({ answer, ms: Date.now() - started }));
      socket.on('error', reject);
      setTimeout(() => socket.destroy(new Error('the server never closed a stalled connection')), 5000).unref();
    });

  it('closes a connection whose headers or body never finish', async () => {
    const slowHeaders = await rawClose(`POST /api/status HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
    assert.match(slowHeaders.answer, /^HTTP\/1\.1 408/);
    const slowBody = await rawClose(
      `POST /api/status HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`,
    );
    assert.match(slowBody.answer, /^HTTP\/1\.1 408/);
  });

  it('a client that aborts mid-body is one info line in the log, not a stack trace', async () => {
    logged.length = 0;
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`POST /api/saveKb HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"question":`);
        setTimeout(() => socket.destroy(), 50);
      });
      socket.on('close', () => resolve());
    });
    const deadline = Date.now() + 2000;
    while (logged.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(logged.length, 1, logged.join('\n'));
    assert.match(logged[0]!, /aborted/);
    assert.ok(!logged[0]!.includes('\n'), 'one line, no stack');
  });
});
