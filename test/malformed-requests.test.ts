import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { startHarness, type Harness } from './helpers/harness.ts';
import { createConsoleServer } from '../src/main/console-api/console-server.ts';

/** Raw bytes to a listener, the whole answer back (the server closes after a malformed request). */
function raw(port: number, request: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head.toLowerCase(), body });
    });
  });
}

/** Requests a browser never sends, on the endpoint and on the console listener: a clear answer, nothing logged as a failure. */
describe('malformed requests get clear answers', () => {
  let h: Harness;
  let consoleServer: Server;
  let consolePort: number;
  let rendererDir: string;
  const logged: string[] = [];

  before(async () => {
    h = await startHarness();
    rendererDir = mkdtempSync(join(tmpdir(), 'sb-malformed-'));
    mkdirSync(join(rendererDir, 'assets'));
    writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>console</title>');
    writeFileSync(join(rendererDir, 'assets', 'app.js'), 'console.log("app")');
    consoleServer = createConsoleServer({
      rendererDir,
      accounts: h.service.console.accounts,
      handlers: h.service.console.handlers,
      events: h.service.console.events,
      log: (line) => logged.push(line),
    });
    await new Promise<void>((r) => consoleServer.listen(0, '127.0.0.1', () => r()));
    consolePort = (consoleServer.address() as AddressInfo).port;
  });
  after(async () => {
    consoleServer.closeAllConnections();
    consoleServer.close();
    await h.stop();
    rmSync(rendererDir, { recursive: true, force: true });
  });

  it('an HTTP/1.1 request without Host gets problem+json bad_request from the endpoint, not a bare 400', async () => {
    const port = Number(new URL(h.url).port);
    for (const request of ['GET /healthz HTTP/1.1\r\n\r\n', 'POST /custom-im/chat-messages HTTP/1.1\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}']) {
      const r = await raw(port, request);
      assert.equal(r.status, 400, request);
      assert.match(r.headers, /content-type: application\/problem\+json/);
      const problem = JSON.parse(r.body) as { code: string; detail: string; request_id: string };
      assert.equal(problem.code, 'bad_request');
      assert.match(problem.detail, /no Host header/);
      assert.match(problem.request_id, /^req_/);
    }
    // HTTP/1.0 has no Host requirement: answered as usual.
    assert.equal((await raw(port, 'GET /healthz HTTP/1.0\r\n\r\n')).status, 200);
  });

  it('the console listener refuses a request without Host as it refuses a foreign one, as JSON', async () => {
    const r = await raw(consolePort, 'GET /api/events HTTP/1.1\r\nconnection: close\r\n\r\n');
    assert.equal(r.status, 421);
    assert.match(r.body, /misdirected_request/);
  });

  it('a folder of the console build (GET /assets/) is not found, and nothing is logged', async () => {
    for (const path of ['/assets/', '/assets', '/assets/app.js/']) {
      const r = await raw(consolePort, `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`);
      assert.equal(r.status, 404, path);
    }
    assert.equal((await raw(consolePort, 'GET /assets/app.js HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n')).status, 200);
    assert.deepEqual(logged, [], 'a request for a folder is no server error');
  });

  it('request targets no browser page should send (`//`, a NUL) get 400 or 404, never end the process or log a failure', async () => {
    const get = (path: string) => raw(consolePort, `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`);
    assert.equal((await get('//')).status, 400);
    for (const path of ['/%00', '/a%00b', '/assets/%00app.js']) assert.equal((await get(path)).status, 404, path);
    assert.equal((await get('/assets/app.js')).status, 200, 'the listener still serves');
    assert.deepEqual(logged, []);
  });
});
