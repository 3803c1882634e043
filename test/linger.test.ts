import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { startHarness, type Harness } from './helpers/harness.ts';

/** What a client got for one oversized upload: the answer, or the error that replaced it. */
interface Outcome {
  status: number | null;
  code: string | null;
  requestId: string | null;
  headerId: string | null;
  connection: string | null;
  error: string | null;
}

const TRIES = 20;
const SIZE = 12 * 1024 * 1024;

function summary(outcomes: Outcome[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes) {
    const key = o.error ?? `${o.status} ${o.code}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return JSON.stringify(Object.fromEntries(counts));
}

function assertAll413(outcomes: Outcome[], code = 'payload_too_large', status = 413): void {
  assert.equal(outcomes.length, TRIES);
  const good = outcomes.filter((o) => o.status === status && o.code === code && o.requestId !== null && o.requestId === o.headerId);
  assert.equal(good.length, TRIES, `every try receives the ${status} problem: ${summary(outcomes)}`);
  assert.ok(outcomes.every((o) => o.connection === 'close'), 'answered with Connection: close');
}

/**
 * Node's fetch and http clients in a process of their own, as an integrator runs them: in the
 * test's own process the server's reset races differently and the failure hides.
 */
const NODE_CLIENT = String.raw`
import { request } from 'node:http';
const [url, mode, tries, size, type] = process.argv.slice(1);
const body = Buffer.alloc(Number(size), 0x20);
const fail = (e) => ({ status: null, code: null, requestId: null, headerId: null, connection: null, error: String(e?.cause?.code ?? e?.code ?? e?.message) });
async function viaFetch() {
  try {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': type }, body });
    const b = await r.json();
    return { status: r.status, code: b.code ?? null, requestId: b.request_id ?? null, headerId: r.headers.get('x-request-id'), connection: r.headers.get('connection'), error: null };
  } catch (e) { return fail(e); }
}
function viaHttp() {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': type, 'content-length': body.length } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        const b = JSON.parse(text);
        resolve({ status: res.statusCode, code: b.code ?? null, requestId: b.request_id ?? null, headerId: res.headers['x-request-id'] ?? null, connection: res.headers.connection ?? null, error: null });
      });
      res.on('error', (e) => resolve(fail(e)));
    });
    req.on('error', (e) => resolve(fail(e)));
    req.end(body); // the whole body first, as a naive integrator writes it
  });
}
for (let i = 0; i < Number(tries); i++) console.log(JSON.stringify(mode === 'fetch' ? await viaFetch() : await viaHttp()));
`;

function lines(command: string, args: string[]): Promise<Outcome[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('close', () => resolve(out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Outcome)));
  });
}

function viaNode(url: string, mode: 'fetch' | 'http', contentType = 'application/json'): Promise<Outcome[]> {
  return lines(process.execPath, ['--input-type=module', '-e', NODE_CLIENT, url, mode, String(TRIES), String(SIZE), contentType]);
}

/** Python's urllib: it sends the whole body, then reads; a reset before that loses the answer. */
const PYTHON = String.raw`
import json, sys, urllib.request, urllib.error
url, tries, size, ctype = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
body = b" " * size
for _ in range(tries):
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            print(json.dumps({"status": r.status, "code": None, "requestId": None, "headerId": None, "connection": r.headers.get("Connection"), "error": None}))
    except urllib.error.HTTPError as e:
        b = json.loads(e.read())
        print(json.dumps({"status": e.code, "code": b.get("code"), "requestId": b.get("request_id"), "headerId": e.headers.get("X-Request-Id"), "connection": e.headers.get("Connection"), "error": None}))
    except Exception as e:
        print(json.dumps({"status": None, "code": None, "requestId": None, "headerId": None, "connection": None, "error": type(e).__name__ + ": " + str(e)}))
    sys.stdout.flush()
`;

function viaPython(url: string, contentType = 'application/json'): Promise<Outcome[]> {
  return lines('python3', ['-c', PYTHON, url, String(TRIES), String(SIZE), contentType]);
}

/**
 * A raw upload that declares `total` bytes and keeps writing 64 KiB chunks (every `everyMs`, or as
 * fast as the socket takes them) until the server cuts the connection.
 */
function upload(url: string, total: number, everyMs: number) {
  const { hostname, port, pathname } = new URL(url);
  // Half-open, like a client that goes on writing after the server's FIN.
  const socket: Socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
  let sent = 0;
  let closed = false;
  let text = '';
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  socket.on('error', () => {});
  const answer = new Promise<string>((resolve) => {
    socket.on('data', (c: Buffer) => {
      text += c.toString();
      if (text.includes('\r\n\r\n')) resolve(text);
    });
  });
  const closedP = new Promise<void>((resolve) => socket.on('close', () => ((closed = true), resolve())));
  socket.write(`POST ${pathname} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${total}\r\n\r\n`);
  const pump = (): void => {
    while (!closed && sent < total) {
      sent += chunk.length;
      const more = socket.write(chunk);
      if (everyMs > 0) return void setTimeout(pump, everyMs);
      if (!more) return void socket.once('drain', pump);
    }
  };
  pump();
  return { answer, closed: closedP, sent: () => sent, isClosed: () => closed };
}

describe('section 1: a refused body gets its answer, then a lingering close', () => {
  let h: Harness;
  before(async () => {
    // The default 10 MiB limit (12 MiB is over it); over 100 refusals from 127.0.0.1 on a frozen clock would
    // otherwise meet the per-address limit, which is not what this test is about.
    h = await startHarness({ config: { addressRateLimit: { enabled: false, perSecond: 1, burst: 1, maxAddresses: 100 } } });
  });
  after(() => h.stop());

  it('Node fetch sending 12 MiB receives the 413 problem, 20 of 20', async () => {
    assertAll413(await viaNode(h.url, 'fetch'));
  });

  it('Node http writing 12 MiB before reading receives the 413 problem, 20 of 20', async () => {
    assertAll413(await viaNode(h.url, 'http'));
  });

  it('Python urllib sending 12 MiB receives the 413 problem, 20 of 20', async () => {
    assertAll413(await viaPython(h.url));
  });

  it('a 12 MiB body of the wrong content type receives the 415 problem, 20 of 20 (fetch, http, urllib)', async () => {
    assertAll413(await viaNode(h.url, 'fetch', 'text/plain'), 'unsupported_media_type', 415);
    assertAll413(await viaNode(h.url, 'http', 'text/plain'), 'unsupported_media_type', 415);
    assertAll413(await viaPython(h.url, 'text/plain'), 'unsupported_media_type', 415);
  });

  it('the refused client\'s rest is read for at most 64 MiB, then the connection is cut', async () => {
    const up = upload(h.url, 256 * 1024 * 1024, 0);
    const answer = await up.answer;
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /connection: close/i);
    await up.closed;
    const mib = up.sent() / 1024 / 1024;
    assert.ok(mib > 64 && mib < 128, `cut after the 64 MiB bound: the client wrote ${mib.toFixed(1)} MiB of 256`);
    console.log(`# cut after the client wrote ${mib.toFixed(1)} MiB`);
  });

  it('a refused client that keeps sending slowly is cut after 10 s (on the service clock)', async () => {
    const up = upload(h.url, 256 * 1024 * 1024, 5);
    assert.match(await up.answer, /^HTTP\/1\.1 413 /);
    await new Promise((resolve) => setTimeout(resolve, 100));
    h.clock.advance(9_999);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(up.isClosed(), false, 'still read and discarded before 10 s');
    h.clock.advance(1);
    await up.closed;
    assert.ok(up.sent() < 64 * 1024 * 1024, 'the time bound, not the size bound, cut it');
  });

  it('the server keeps serving after the refusals', async () => {
    assert.equal((await fetch(`${h.base}/healthz`)).status, 200);
  });
});
