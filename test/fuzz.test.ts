import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, Agent } from 'node:http';
import { connect } from 'node:net';
import { startHarness, type Harness } from './helpers/harness.ts';
import { signBody } from './helpers/sign.ts';

/** Deterministic PRNG so a failure can be replayed from its seed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SECRET = 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz';
const EVENT_TYPES = ['auto_dialog', 'assist_dialog', 'website_dialog', 'cmd_dialog'];

function deep(n: number): unknown {
  let v: unknown = 'bottom';
  for (let i = 0; i < n; i++) v = i % 2 ? [v] : { k: v };
  return v;
}

function weirdValue(r: () => number): unknown {
  const choices: Array<() => unknown> = [
    () => null,
    () => true,
    () => -1,
    () => 1e308 * 10 === Infinity ? 1.5e300 : 0,
    () => Math.floor(r() * 1e12),
    () => '',
    () => 'x'.repeat(Math.floor(r() * 30_000)),
    () => '\ud800 lone surrogate',
    () => '中文😀\u0000\u001f',
    () => [],
    () => [1, 'a', null],
    () => ({}),
    () => ({ nested: { a: [1, { b: 2 }] } }),
    () => deep(5 + Math.floor(r() * 60)),
    () => 'https://example.com/' + 'a'.repeat(Math.floor(r() * 3000)),
    () => 'data:;base64,@@@',
    () => 'stop_auto_reply',
  ];
  return choices[Math.floor(r() * choices.length)]!();
}

function validInfo(r: () => number, i: number): Record<string, unknown> {
  const et = EVENT_TYPES[Math.floor(r() * EVENT_TYPES.length)]!;
  const info: Record<string, unknown> = { event_type: et, msg_id: `f-${i}`, from_user_id: `u${i % 50}`, content: 'hello there' };
  if (et === 'auto_dialog') info['from_user_type'] = 1 + Math.floor(r() * 4);
  if (et === 'cmd_dialog') info['content'] = 'stop_auto_reply';
  if (r() < 0.3) info['group_id'] = `g${i % 7}`;
  if (r() < 0.3) info['files_info'] = [{ content: 'aGVsbG8=', file_type: 'image' }];
  return info;
}

const FIELDS = ['event_type', 'msg_id', 'group_id', 'from_user_id', 'from_user_type', 'to_user_id', 'content', 'files_info', 'quote', 'at_list', 'send_url', 'create_timestamp', 'message_type'];

function mutateInfo(r: () => number, info: Record<string, unknown>): void {
  const n = 1 + Math.floor(r() * 3);
  for (let k = 0; k < n; k++) {
    const field = FIELDS[Math.floor(r() * FIELDS.length)]!;
    const op = r();
    if (op < 0.3) delete info[field];
    else info[field] = weirdValue(r);
  }
}

/** One mutated request: a body (string or bytes) and the content type to send it with. */
function mutated(r: () => number, i: number, now: number): { body: Buffer; type: string } {
  const info = validInfo(r, i);
  mutateInfo(r, info);
  let top: Record<string, unknown>;
  try {
    top = signBody('acme', SECRET, info, now);
  } catch {
    // Not canonicalizable (lone surrogate): the integrator could not sign it either.
    top = { client: 'acme', signature: 'ab'.repeat(32), timestamp: now, message_info: info };
  }
  const kind = r();
  if (kind < 0.1) top = { ...top, timestamp: weirdValue(r) };
  else if (kind < 0.15) delete top[['client', 'signature', 'timestamp', 'message_info'][Math.floor(r() * 4)]!];
  else if (kind < 0.2) top['extra'] = weirdValue(r);
  else if (kind < 0.25) top['message_info'] = weirdValue(r);
  let text: string;
  try {
    text = JSON.stringify(top);
  } catch {
    text = '{}';
  }
  let body = Buffer.from(text);
  const bytes = r();
  if (bytes < 0.07) body = body.subarray(0, Math.floor(r() * body.length));
  else if (bytes < 0.12) {
    body = Buffer.from(body);
    body[Math.floor(r() * body.length)] = 0xff;
  } else if (bytes < 0.15) body = Buffer.concat([body.subarray(0, 20), Buffer.from([0xc3, 0x28]), body.subarray(20)]);
  else if (bytes < 0.17) body = Buffer.from('['.repeat(200_000));
  else if (bytes < 0.19) body = Buffer.from(`{"client":"acme","signature":"x","timestamp":${now},"message_info":${'{"a":'.repeat(5000)}1${'}'.repeat(5001)}`);
  const type = r() < 0.03 ? 'text/plain' : 'application/json';
  return { body, type };
}

function send(url: URL, agent: Agent, body: Buffer, type: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': type, 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('robustness: randomly mutated requests', () => {
  let h: Harness;
  before(async () => {
    // The pipeline is under test, not the limits: from one address nearly every request here fails authentication.
    h = await startHarness({ config: { rateLimit: { perSecond: 1_000_000, burst: 1_000_000 }, addressRateLimit: { enabled: false, perSecond: 1, burst: 1, maxAddresses: 100 } } });
    h.addClient('acme', { sendUrl: 'http://127.0.0.1:9/hook' });
    h.admin.kb.add('hello there', 'Hi! How can I help?', 0);
  });
  after(() => h.stop());

  it('3,000 mutated requests get only 2xx or 4xx answers, and the server stays healthy', async () => {
    const seed = Number(process.env['FUZZ_SEED'] ?? 20261121);
    const r = rng(seed);
    const url = new URL(h.url);
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const statuses = new Map<number, number>();
    const total = 3000;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < total) {
        const i = next++;
        const { body, type } = mutated(r, i, h.now());
        const status = await send(url, agent, body, type);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        assert.ok(status >= 200 && status < 500, `seed ${seed}, request ${i}: status ${status} for ${body.subarray(0, 300).toString()}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    agent.destroy();
    const summary = [...statuses].sort().map(([s, n]) => `${s}:${n}`).join(' ');
    assert.ok((statuses.get(400) ?? 0) > 500, `plenty of validation failures (${summary})`);
    assert.ok((statuses.get(200) ?? 0) > 50, `some mutations stay valid (${summary})`);
    console.log(`status counts (seed ${seed}): ${summary}`);
    assert.deepEqual(await (await fetch(`${h.base}/healthz`)).json(), { status: 'ok' });
  });

  it('malformed HTTP itself is answered 400 and does not disturb the server', async () => {
    const url = new URL(h.url);
    for (const raw of ['GARBAGE\r\n\r\n', 'POST /custom-im/chat-messages HTTP/1.1\r\nContent-Length: nope\r\n\r\n', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n']) {
      const reply = await new Promise<string>((resolve) => {
        const socket = connect(Number(url.port), url.hostname, () => socket.end(raw));
        let data = '';
        socket.on('data', (c) => (data += c.toString()));
        socket.on('close', () => resolve(data));
        socket.on('error', () => resolve(data));
      });
      assert.match(reply, /^HTTP\/1\.1 4\d\d/, JSON.stringify(raw));
    }
    assert.equal((await fetch(`${h.base}/healthz`)).status, 200);
  });
});
