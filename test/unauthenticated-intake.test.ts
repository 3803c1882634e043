import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { signBody } from './helpers/sign.ts';

const KiB = 1024;
/** The first `bytes` of an unsigned body, left open: what a request that is still sending holds. */
const partial = (bytes: number): string => `{"client":"nobody","x":"${'a'.repeat(bytes - 24)}`;

/** A connection from `from` (any 127.x address reaches the loopback listener) that sent a request head and `first` of its body. */
interface Held {
  socket: Socket;
  /** The whole answer, once the server has closed the connection or answered in full. */
  answer: Promise<{ status: number; head: string; body: string }>;
  /** Bytes of body the server had read from us when it answered (what we had written). */
  sentBeforeAnswer: () => number;
}

function hold(port: number, from: string, declared: number | null, first: string | Buffer): Promise<Held> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: from }, () => {
      const framing = declared === null ? 'transfer-encoding: chunked' : `content-length: ${declared}`;
      socket.write(`POST /custom-im/chat-messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${framing}\r\n\r\n`);
      const piece = Buffer.from(first);
      if (piece.length) socket.write(declared === null ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece);
      written = piece.length;
      resolve({ socket, answer, sentBeforeAnswer: () => atAnswer });
    });
    let written = 0;
    let atAnswer = -1;
    let text = '';
    const answer = new Promise<{ status: number; head: string; body: string }>((done) => {
      const finish = (): void => {
        const [head = '', body = ''] = text.split('\r\n\r\n', 2);
        done({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head: head.toLowerCase(), body: body.replace(/^[0-9a-f]+\r\n|\r\n0\r\n\r\n$/g, '') });
      };
      socket.on('data', (chunk: Buffer) => {
        if (atAnswer < 0) atAnswer = written;
        text += chunk.toString();
        const [head = '', body] = text.split('\r\n\r\n', 2);
        const length = /content-length: (\d+)/i.exec(head);
        if (body !== undefined && length && Buffer.byteLength(body) >= Number(length[1])) finish();
      });
      socket.on('close', finish);
    });
    socket.on('error', reject);
  });
}

/** Waits until the server's intake budget holds at least `bytes` (its /metrics gauge). */
async function reservedAt(base: string, bytes: number): Promise<void> {
  for (;;) {
    const text = await (await fetch(`${base}/metrics`)).text();
    if (Number(/^switchboard_intake_bytes (\d+)/m.exec(text)?.[1] ?? 0) >= bytes) return;
  }
}

/** Waits until the server's intake budget holds at most `bytes`. */
async function releasedTo(base: string, bytes: number): Promise<void> {
  for (;;) {
    const text = await (await fetch(`${base}/metrics`)).text();
    if (Number(/^switchboard_intake_bytes (\d+)/m.exec(text)?.[1] ?? Infinity) <= bytes) return;
  }
}

/** Requests before authentication cost bounded work and memory (docs/operations.md, "Limits"). */
describe('requests not yet authenticated', () => {
  let h: Harness;
  let port = 0;

  before(async () => {
    h = await startHarness({
      clockStart: Date.now(),
      config: {
        bodyLimitBytes: 256 * KiB,
        intake: { totalBytes: 768 * KiB, perAddressBytes: 512 * KiB, perAddressConnections: 6, bodyTimeoutMs: 5_000, maxConnections: 40 },
        addressRateLimit: { enabled: false, perSecond: 10, burst: 100, maxAddresses: 100_000 },
      },
    });
    h.addClient('acme');
    port = Number(new URL(h.url).port);
  });
  after(() => h.stop());
  const reserved = (bytes: number): Promise<void> => reservedAt(h.base, bytes);

  it('a body nested too deep is refused at its first bytes, not after all of it was read and parsed', async () => {
    const first = `{"client":"nobody","message_info":${'['.repeat(4 * KiB)}`;
    const held = await hold(port, '127.0.0.1', 200 * KiB, first);
    const { status, head, body } = await held.answer;
    assert.equal(status, 400);
    assert.match(head, /content-type: application\/problem\+json/);
    const problem = JSON.parse(body) as { code: string; detail: string };
    assert.equal(problem.code, 'validation_failed');
    assert.match(problem.detail, /nests deeper than 33 levels \(message_info: 32\)/);
    assert.equal(held.sentBeforeAnswer(), first.length, 'answered while 196 KiB of the declared body were still to come');
    held.socket.destroy();
  });

  it('a body of too many members is refused as it arrives, with the bound in its detail', async () => {
    const keys = Array.from({ length: 10_001 }, (_, i) => `"k${i}":1`).join(',');
    const r = await h.postRaw(`{"client":"nobody","timestamp":1,"signature":"x","message_info":{${keys}}}`);
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'validation_failed');
    assert.match(String(r.body['detail']), /holds more than 10000 members and elements/);
  });

  it('an address holds its share of memory at most: the request that would pass it is answered 429 before its body is read', async () => {
    const a = await hold(port, '127.0.0.2', 256 * KiB, partial(250 * KiB));
    const b = await hold(port, '127.0.0.2', 256 * KiB, partial(250 * KiB));
    await reserved(500 * KiB);
    const c = await hold(port, '127.0.0.2', 100 * KiB, '');
    const refused = await c.answer;
    assert.equal(refused.status, 429);
    assert.match(refused.head, /retry-after: 1/);
    assert.match(JSON.parse(refused.body).detail, /not yet authenticated already hold all the memory one address may use/);
    // Another address still has its own share.
    const other = await hold(port, '127.0.0.3', 10, '{"client":');
    other.socket.write('"x"}');
    assert.equal((await other.answer).status, 400);
    for (const s of [a, b]) s.socket.destroy();
  });

  it('past the total, any new address gets 503 with Retry-After; a connection that authenticated before is still served', async () => {
    // An integrator already talking: its keep-alive connection carried a signed request.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const signed = (): Promise<number> =>
      new Promise((resolve, reject) => {
        const body = JSON.stringify(signBody('acme', 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz', { event_type: 'website_dialog', msg_id: mid('intake'), from_user_id: 'v1', content: 'hello' }, Math.floor(Date.now() / 1000)));
        const req = request({ port, host: '127.0.0.1', path: '/custom-im/chat-messages', method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(body);
      });
    assert.equal(await signed(), 200);
    const held = [
      await hold(port, '127.0.0.4', 256 * KiB, partial(250 * KiB)),
      await hold(port, '127.0.0.4', 256 * KiB, partial(250 * KiB)),
      await hold(port, '127.0.0.5', 256 * KiB, partial(250 * KiB)),
    ];
    await reserved(750 * KiB);
    const late = await hold(port, '127.0.0.6', 100 * KiB, '');
    const refused = await late.answer;
    assert.equal(refused.status, 503);
    assert.match(refused.head, /retry-after: 1/);
    assert.equal(JSON.parse(refused.body).code, 'service_unavailable');
    assert.equal(await signed(), 200, 'the trusted connection reads its body outside the budget');
    for (const s of held) s.socket.destroy();
    agent.destroy();
  });

  it('a request that declares much and sends little holds only what it sent: idle connections cannot lock new callers out', async () => {
    const idle = await Promise.all(['127.0.0.9', '127.0.0.9', '127.0.0.10', '127.0.0.10'].map((from) => hold(port, from, 256 * KiB, '{')));
    const fresh = await hold(port, '127.0.0.11', 200 * KiB, partial(200 * KiB));
    fresh.socket.write('"}');
    // Its body completes (unsigned, so 400), where charging declared lengths answered 503 at once.
    assert.equal((await fresh.answer).status, 400);
    for (const s of idle) s.socket.destroy();
  });

  it('a body that has not arrived within the intake deadline is answered 408, and its bytes are given back', async () => {
    const slow = await hold(port, '127.0.0.12', 10 * KiB, partial(4 * KiB));
    await reserved(4 * KiB);
    h.clock.advance(5_000);
    const answer = await slow.answer;
    assert.equal(answer.status, 408);
    assert.equal(JSON.parse(answer.body).code, 'request_timeout');
    await releasedTo(h.base, 0);
    slow.socket.destroy();
  });

  it('a body of unknown length is charged as it arrives, and refused when it passes its share', async () => {
    const bodies: Held[] = [];
    for (const [size, total] of [[200, 200], [200, 400], [100, 500]] as const) {
      bodies.push(await hold(port, '127.0.0.7', null, Buffer.alloc(size * KiB, 0x20)));
      await reserved(total * KiB);
    }
    bodies[2]!.socket.write(`${(20 * KiB).toString(16)}\r\n${' '.repeat(20 * KiB)}\r\n`);
    const answer = await bodies[2]!.answer;
    assert.equal(answer.status, 429, 'its 20 KiB more pass the address\'s 512 KiB');
    for (const s of bodies) s.socket.destroy();
  });

  it('past the cap of connections in all (40 here), a new one is closed at once, unanswered', async () => {
    const open: Held[] = [];
    let refused: number | null = null;
    for (let i = 0; i <= 40 && refused === null; i++) {
      // Each answered (and so counted by the server), then kept open; the test's own keep-alive fetches count too.
      const held = await hold(port, `127.0.1.${1 + (i % 8)}`, 2, '{}');
      const { status } = await held.answer;
      if (status === 0) refused = i;
      else open.push(held);
    }
    assert.ok(refused !== null && refused <= 40, 'one connection past the cap was closed unanswered');
    assert.ok(open.length > 30, `the connections within the cap were answered (${open.length})`);
    for (const s of open) s.socket.destroy();
    // Once they have closed, a new connection is served again.
    for (let status = 0; status !== 400; ) status = (await (await hold(port, '127.0.1.9', 2, '{}')).answer).status;
  });

  it('connections past the cap of one address are answered 429 and closed; the others are not', async () => {
    const open = await Promise.all(Array.from({ length: 6 }, () => hold(port, '127.0.0.8', 10, '')));
    const extra = await hold(port, '127.0.0.8', 10, '');
    const refused = await extra.answer;
    assert.equal(refused.status, 429);
    assert.match(JSON.parse(refused.body).detail, /more than 6 connections open/);
    open[0]!.socket.write('{"client":1}');
    assert.equal((await open[0]!.answer).status, 400, 'those within the cap are served');
    for (const s of open) s.socket.destroy();
    const health = await fetch(`${h.base}/healthz`);
    assert.equal(health.status, 200);
  });
});
