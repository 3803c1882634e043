import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { eventually } from './helpers/receiver.ts';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import type { Engine } from '../src/main/engines/engine.ts';

const info = () => ({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'c', from_user_type: 2, content: 'hi' });

/** Streams `total` bytes in chunks, reporting whether the answer came before the upload ended. */
function streamUpload(url: string, total: number, declareLength: boolean): Promise<{ status: number; body: string; sent: number }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    const headers: Record<string, string | number> = { 'content-type': 'application/json' };
    if (declareLength) headers['content-length'] = total;
    const req = request(url, { method: 'POST', headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, sent }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'EPIPE' || e.code === 'ECONNRESET' ? undefined : reject(e)));
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    const pump = (): void => {
      while (sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

describe('section 1: transport', () => {
  let h: Harness;
  let failing: Harness;
  before(async () => {
    h = await startHarness({ config: { bodyLimitBytes: 1024 * 1024 } });
    h.addClient('acme', { sendUrl: 'http://127.0.0.1:9/hook' });
    const broken: Engine = {
      name: 'broken',
      answer: () => Promise.reject(new Error('secret internals at /srv/engine.ts:42')),
    };
    failing = await startHarness({ engine: broken });
    failing.addClient('acme');
  });
  after(async () => {
    await h.stop();
    await failing.stop();
  });

  it('refuses a non-JSON content type with 415; accepts charset=utf-8', async () => {
    const r = await h.postRaw('{}', { 'content-type': 'text/plain' });
    assert.equal(r.status, 415);
    assert.equal(r.body.code, 'unsupported_media_type');
    assert.equal((await h.postRaw('{}', { 'content-type': 'application/json; charset=latin1' })).status, 415);
    const ok = await h.post(info(), { headers: { 'content-type': 'application/json; charset=UTF-8' } });
    assert.equal(ok.status, 200);
  });

  it('refuses a declared oversized body with 413 at once, without reading it', async () => {
    const r = await streamUpload(h.url, 64 * 1024 * 1024, true);
    assert.equal(r.status, 413);
    assert.equal(JSON.parse(r.body).code, 'payload_too_large');
    assert.ok(r.sent < 64 * 1024 * 1024, 'answered before the upload finished');
  });

  it('refuses an undeclared (chunked) oversized body as soon as it passes the limit', async () => {
    const r = await streamUpload(h.url, 64 * 1024 * 1024, false);
    assert.equal(r.status, 413);
    assert.ok(r.sent < 64 * 1024 * 1024, `stopped reading: ${r.sent} bytes written of 64 MiB`);
    assert.equal((await fetch(`${h.base}/healthz`)).status, 200);
  });

  it('answers 405 with Allow for other methods and 404 for unknown paths, as problem+json', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const r = await fetch(h.url, { method });
      assert.equal(r.status, 405);
      assert.equal(r.headers.get('allow'), 'POST');
      assert.equal(((await r.json()) as { code: string }).code, "method_not_allowed");
    }
    const nf = await fetch(`${h.base}/custom-im/other`, { method: 'POST' });
    assert.equal(nf.status, 404);
    assert.match(nf.headers.get('content-type') ?? '', /problem\+json/);
    assert.equal(((await nf.json()) as { code: string }).code, "not_found");
  });

  it('serves /healthz, /readyz and Prometheus /metrics', async () => {
    assert.deepEqual(await (await fetch(`${h.base}/healthz`)).json(), { status: 'ok' });
    // SQLite is a file of this process: a server that answers is ready.
    assert.deepEqual(await (await fetch(`${h.base}/readyz`)).json(), { status: 'ready' });
    const posted = await fetch(`${h.base}/readyz`, { method: 'POST' });
    assert.equal(posted.status, 405);
    assert.equal(posted.headers.get('allow'), 'GET, HEAD');
    await h.post(info());
    const metrics = await (await fetch(`${h.base}/metrics`)).text();
    assert.match(metrics, /# TYPE switchboard_http_requests_total counter/);
    assert.match(metrics, /switchboard_http_requests_total\{event_type="auto_dialog",status="200"\} \d+/);
    assert.match(metrics, /switchboard_http_request_duration_seconds_bucket\{le="\+Inf"\} \d+/);
    assert.match(metrics, /switchboard_messages_stored_total\{event_type="auto_dialog"\} \d+/);
    assert.match(metrics, /^switchboard_ingest_queued 0$/m, 'nothing waits for the main thread once the answer is out');
    // Every group commit is timed on the writer thread and shows here: as many as the batches so far.
    const batches = Number(/^switchboard_db_commit_batches (\d+)$/m.exec(metrics)?.[1]);
    assert.ok(batches >= 1, 'the accepted message was committed');
    assert.match(metrics, /^# TYPE switchboard_db_commit_duration_seconds histogram$/m);
    assert.equal(Number(/^switchboard_db_commit_duration_seconds_count (\d+)$/m.exec(metrics)?.[1]), batches);
    assert.equal(Number(/^switchboard_db_commit_duration_seconds_bucket\{le="\+Inf"\} (\d+)$/m.exec(metrics)?.[1]), batches);
    assert.ok(Number(/^switchboard_db_commit_duration_seconds_sum (\S+)$/m.exec(metrics)?.[1]) > 0, 'a real COMMIT takes time');
  });

  it('every response carries X-Request-Id, the caller\'s own when it is safe, and the body repeats it', async () => {
    const own = await h.post(info(), { headers: { 'x-request-id': 'trace-42.abc:def' } });
    assert.equal(own.headers.get('x-request-id'), 'trace-42.abc:def');
    assert.equal(own.body['request_id'], 'trace-42.abc:def');
    const unsafe = await h.post(info(), { headers: { 'x-request-id': 'bad id <script>' } });
    assert.notEqual(unsafe.headers.get('x-request-id'), 'bad id <script>');
    assert.equal(unsafe.body['request_id'], unsafe.headers.get('x-request-id'));
    const tooLong = await h.postRaw('nope', { 'content-type': 'application/json', 'x-request-id': 'x'.repeat(129) });
    assert.equal(tooLong.body['request_id'], tooLong.headers.get('x-request-id'));
    assert.notEqual(tooLong.headers.get('x-request-id'), 'x'.repeat(129));
    const health = await fetch(`${h.base}/healthz`);
    assert.ok(health.headers.get('x-request-id'));
  });

  it('logs every request, rejected ones too, with status, code and latency', async () => {
    const r = await h.postRaw('{"broken', { 'content-type': 'application/json', 'x-request-id': 'log-me-1' });
    await h.quiesce();
    const [row] = h.admin.requestLog.byRequestId('log-me-1');
    assert.ok(row, 'request log row written');
    assert.equal(row.status, 400);
    assert.equal(row.code, 'invalid_json');
    assert.equal(JSON.parse(row.problem!).request_id, r.body['request_id']);
    assert.ok(row.latencyMs >= 0);
  });

  it('an internal failure is a 500 problem without a stack trace, and the server keeps serving', async () => {
    const r = await failing.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'v', content: 'hi' });
    assert.equal(r.status, 500);
    assert.equal(r.body.code, 'internal_error');
    assert.doesNotMatch(JSON.stringify(r.body), /srv\/engine|at |\.ts:/);
    assert.equal((await fetch(`${failing.base}/healthz`)).status, 200);
  });
});

/**
 * Writes raw bytes, reads until the server closes; `destroyAfterMs` aborts like a vanishing client.
 * `then` is written once the first answer arrived (a second request on a kept-alive connection).
 */
function rawExchange(base: string, data: string, destroyAfterMs?: number, then?: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let out = '';
    socket.on('data', (c: Buffer) => {
      out += c.toString('latin1');
      if (then !== undefined) socket.write(then);
      then = undefined;
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve(out));
    socket.write(data);
    if (destroyAfterMs !== undefined) setTimeout(() => socket.destroy(), destroyAfterMs);
  });
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** The responses in `text`, in order (keep-alive answers several on one connection). */
function parseAnswers(text: string): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let rest = text;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    assert.ok(end > 0, `a complete head in ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length']);
    const bodyText = rest.slice(end + 4, end + 4 + length);
    answers.push({ status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(bodyText) as Record<string, unknown> });
    rest = rest.slice(end + 4 + length);
  }
  return answers;
}

function assertRawProblem(a: RawAnswer | undefined, status: number, code: string): void {
  assert.ok(a, 'an answer');
  assert.equal(a.status, status, JSON.stringify(a.body));
  assert.equal(a.headers['content-type'], 'application/problem+json');
  assert.equal(a.headers['connection'], 'close');
  assert.equal(a.body['code'], code);
  assert.equal(a.body['type'], `urn:switchboard:error:${code}`);
  assert.equal(a.body['status'], status);
  assert.equal(typeof a.body['title'], 'string');
  assert.equal(typeof a.body['detail'], 'string');
  assert.match(String(a.body['request_id']), /^req_/);
  assert.equal(a.body['request_id'], a.headers['x-request-id']);
}

describe('section 1: malformed HTTP gets problem+json, and one log line', () => {
  let h: Harness;
  const log: string[] = [];
  const head = (extra: string): string => `POST /custom-im/chat-messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extra}\r\n`;
  before(async () => {
    h = await startHarness({ log: (line) => log.push(line) });
  });
  after(() => h.stop());

  it('a bad request line is 400 bad_request with a fresh request id in body and header', async () => {
    const first = parseAnswers(await rawExchange(h.base, 'GARBAGE\r\n\r\n'));
    assertRawProblem(first[0], 400, 'bad_request');
    const second = parseAnswers(await rawExchange(h.base, 'GET /healthz HTTP/9.9 what\r\n\r\n'));
    assertRawProblem(second[0], 400, 'bad_request');
    assert.notEqual(first[0]!.body['request_id'], second[0]!.body['request_id']);
  });

  it('headers over the parser limit are 431 headers_too_large', async () => {
    const [a] = parseAnswers(await rawExchange(h.base, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    assertRawProblem(a, 431, 'headers_too_large');
  });

  it('a client that goes on writing after its malformed head still gets the answer and a clean close, not a reset', async () => {
    const { hostname, port } = new URL(h.base);
    for (const [data, status] of [
      [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}`, 431],
      [head('Transfer-Encoding: chunked\r\n') + '5\r\n{"a":\r\nZZ\r\n', 400],
    ] as const) {
      const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
      let text = '';
      let reset = '';
      socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
      socket.on('error', (e: NodeJS.ErrnoException) => (reset = e.code ?? e.message));
      socket.on('end', () => socket.end()); // after all our writes
      socket.write(data);
      for (let i = 0; i < 64; i++) socket.write(Buffer.alloc(64 * 1024, 0x41));
      await new Promise((resolve) => socket.on('close', resolve));
      assert.equal(reset, '', `no reset (status ${status})`);
      assert.equal(parseAnswers(text)[0]?.status, status);
    }
  });

  it('after a good request on a kept-alive connection, a malformed one is still answered', async () => {
    const answers = parseAnswers(await rawExchange(h.base, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', undefined, 'BROKEN\r\n\r\n'));
    assert.equal(answers.length, 2);
    assert.equal(answers[0]!.status, 200);
    assertRawProblem(answers[1], 400, 'bad_request');
  });

  it('a bad chunked body is 400 bad_request and one info line in the log, no stack trace', async () => {
    log.length = 0;
    const [a] = parseAnswers(await rawExchange(h.base, head('Transfer-Encoding: chunked\r\n') + '5\r\n{"a":\r\nZZ\r\n'));
    assertRawProblem(a, 400, 'bad_request');
    assert.match(String(a!.body['detail']), /chunk/i);
    // The request's handler has ended and every write it made is committed: a second line would be out.
    await h.quiesce();
    assert.equal(log.length, 1, JSON.stringify(log));
    assert.match(log[0]!, /HPE_INVALID_CHUNK_SIZE/);
    assert.ok(log[0]!.includes(String(a!.body['request_id'])), 'the line names the request id the client got');
    assert.doesNotMatch(log[0]!, /\n|\bat /);
  });

  it('a client that aborts in the middle of its body is one info line in the log, no stack trace', async () => {
    for (const [name, data] of [
      ['declared length', head('Content-Length: 1000\r\n') + '{"client":'],
      ['chunked', head('Transfer-Encoding: chunked\r\n') + '5\r\n{"a":\r\n'],
    ] as const) {
      log.length = 0;
      assert.equal(await rawExchange(h.base, data, 50), '', `${name}: nothing to answer`);
      await eventually(() => log.length > 0, `${name}: a log line`);
      await h.quiesce();
      assert.equal(log.length, 1, `${name}: ${JSON.stringify(log)}`);
      assert.doesNotMatch(log[0]!, /\n|\bat |Error/, name);
    }
    assert.equal((await fetch(`${h.base}/healthz`)).status, 200);
  });
});

describe('database contention', () => {
  /** Holds the database's write lock from another connection, as a bulk load or a backup would. */
  const lock = async (h: Harness) => {
    const { DatabaseSync } = await import('node:sqlite');
    const blocker = new DatabaseSync(`${h.dataDir}/switchboard.db`, { timeout: 0 });
    blocker.exec('BEGIN IMMEDIATE');
    return () => {
      blocker.exec('ROLLBACK');
      blocker.close();
    };
  };
  /** The gauges /metrics shows now; its own request is one of `switchboard_http_in_flight`. */
  const gauges = async (h: Harness) => {
    const text = await (await fetch(`${h.base}/metrics`)).text();
    const gauge = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
    return { inFlight: gauge('switchboard_http_in_flight'), writes: gauge('switchboard_db_writes_pending') };
  };

  it('a write lock held past the busy timeout is 503 with Retry-After, and nothing is stored', async () => {
    const h = await startHarness({ config: { busyTimeoutMs: 300 } });
    h.addClient('acme', { sendUrl: 'http://127.0.0.1:9/hook' });
    const release = await lock(h);
    const msgId = mid();
    const r = await h.post({ event_type: 'auto_dialog', msg_id: msgId, from_user_id: 'c', from_user_type: 2, content: 'hi' });
    release();
    assert.equal(r.status, 503, JSON.stringify(r.body));
    assert.equal(r.body.code, 'service_unavailable');
    assert.equal(r.headers.get('retry-after'), '1');
    const retry = await h.post({ event_type: 'auto_dialog', msg_id: msgId, from_user_id: 'c', from_user_type: 2, content: 'hi' });
    assert.equal(retry.status, 200);
    assert.equal(retry.headers.get('idempotent-replayed'), null, 'the first attempt stored nothing');
    await h.stop();
  });

  it('a write lock released within the busy timeout is waited for: the message is stored, 200', async () => {
    // The busy timeout is SQLite's own (real time): a long one, so the release always comes inside it.
    const h = await startHarness({ config: { busyTimeoutMs: 60_000 } });
    try {
      h.addClient('acme', { sendUrl: 'http://127.0.0.1:9/hook' });
      const release = await lock(h);
      let answered = false;
      const pending = h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'c', from_user_type: 2, content: 'hi' }).finally(() => (answered = true));
      // Read, authenticated and handed to the writer thread, which waits on the lock; unanswered.
      await eventually(async () => {
        const g = await gauges(h);
        return g.inFlight === 2 && g.writes >= 1;
      }, 'the message waiting on the lock');
      assert.equal(answered, false, 'not refused while the lock is held');
      release();
      const r = await pending;
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.ok(h.admin.messages.findAutoMessage('acme', String(r.body['msg_id'])), 'stored once the lock was released');
    } finally {
      await h.stop();
    }
  });
});
