import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { signBody } from './honest.ts';

/**
 * One attack of bench/hostile, as a process of its own (so its CPU is not the honest client's):
 * started by bench/hostile/run.ts with an IPC channel, it attacks until told 'stop' (or, for a
 * finite attack, until it is done: it then says 'done'), and answers with its tally: the server's
 * answers by status and the failures without an answer. Attackers send from 127/8 addresses other
 * than the honest client's (127.0.0.2): the default 127.0.0.1, or many (attack 4).
 */
const env = (name: string): string => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`attacker: ${name} is not set`);
  return v;
};
const num = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);

const ATTACK = env('HOSTILE_ATTACK');
const ENDPOINT = new URL(env('HOSTILE_ENDPOINT'));
const MB = 1_000_000;

const statuses: Record<string, number> = {};
const errors: Record<string, number> = {};
let requests = 0;
let running = true;
const sockets = new Set<Socket>();
const agents: Agent[] = [];
const extra: Record<string, unknown> = {};

const count = (status: number): void => void (statuses[status] = (statuses[status] ?? 0) + 1);
// Connections cut by our own stop are not the server's doing.
const fail = (code: string): void => void (running && (errors[code] = (errors[code] ?? 0) + 1));

/** One POST through node:http; a status counts even when the server cut the upload short after answering. */
function post(url: URL, body: Buffer | string, o: { agent?: Agent; localAddress?: string; method?: string } = {}): Promise<number> {
  requests++;
  return new Promise((resolve) => {
    let status = 0;
    let settled = false;
    const settle = (code?: string): void => {
      if (settled) return;
      settled = true;
      if (status) count(status);
      else fail(code ?? 'no answer');
      resolve(status);
    };
    const req = request(url, { method: o.method ?? 'POST', agent: o.agent ?? false, ...(o.localAddress ? { localAddress: o.localAddress } : {}), headers: o.method === 'GET' ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      status = res.statusCode ?? 0;
      res.resume();
      res.on('end', () => settle());
      res.on('error', () => settle());
    });
    req.on('socket', (s) => {
      // A keep-alive socket carries many requests: watched once.
      if (sockets.has(s)) return;
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    });
    req.setTimeout(120_000, () => req.destroy(new Error('timed out')));
    req.on('error', (e) => settle((e as NodeJS.ErrnoException).code ?? e.message));
    req.on('close', () => settle());
    if (o.method === 'GET') req.end();
    else req.end(body);
  });
}

/** Raw bytes on a fresh connection; resolves with the status of the first answer (0: none). */
function raw(port: number, head: string, body?: { bytes: Buffer; chunk: number; everyMs: number }): Promise<void> {
  requests++;
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    sockets.add(s);
    let got = '';
    let timer: NodeJS.Timeout | undefined;
    s.on('connect', () => {
      s.write(head);
      if (!body) return;
      let at = 0;
      timer = setInterval(() => {
        if (at >= body.bytes.length || s.destroyed) return clearInterval(timer);
        s.write(body.bytes.subarray(at, at + body.chunk));
        at += body.chunk;
      }, body.everyMs);
    });
    s.on('data', (d: Buffer) => {
      got += d.toString('latin1', 0, Math.min(d.length, 64));
      if (/^HTTP\/1\.1 \d{3}/.test(got)) s.destroy();
    });
    s.on('error', () => {});
    s.on('close', () => {
      clearInterval(timer);
      sockets.delete(s);
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      if (m) count(Number(m[1]));
      else fail('closed without an answer');
      resolve();
    });
  });
}

/** `n` loops of `step` until stopped. */
async function loops(n: number, step: (i: number) => Promise<unknown>): Promise<void> {
  await Promise.all(Array.from({ length: n }, async (_, i) => {
    while (running) await step(i);
  }));
}

const keepAlive = (maxSockets: number): Agent => {
  const a = new Agent({ keepAlive: true, maxSockets });
  agents.push(a);
  return a;
};
const now = (): number => Math.floor(Date.now() / 1000);
const WRONG_SIGNATURE = '0'.repeat(64);

const attacks: Record<string, () => Promise<void>> = {
  // 1a: 8 MB of nested arrays, no envelope at all, back to back on one connection.
  async '1a'() {
    const body = Buffer.alloc(8 * MB, '[');
    const agent = keepAlive(1);
    await loops(1, () => post(ENDPOINT, body, { agent }));
  },
  // 1b: 400,000 keys in message_info (4.7 MB), the real client's id and a wrong signature: the
  // server canonicalizes the object to check a signature that cannot match.
  async '1b'() {
    const keys = Array.from({ length: 400_000 }, (_, i) => `"k${i}":1`).join(',');
    const body = Buffer.from(`{"client":"honest","timestamp":${now()},"signature":"${WRONG_SIGNATURE}","message_info":{"event_type":"auto_dialog","msg_id":"big","from_user_id":"u","from_user_type":2,"content":"hi",${keys}}}`);
    extra['bodyBytes'] = body.length;
    const agent = keepAlive(1);
    await loops(1, () => post(ENDPOINT, body, { agent }));
  },
  // 2: 50 connections, each sending 8 MB bodies from an unknown client, again as soon as answered.
  async '2'() {
    const body = Buffer.from(`{"client":"nobody","timestamp":${now()},"signature":"${WRONG_SIGNATURE}","message_info":{"content":"${'a'.repeat(8 * MB)}"}}`);
    await loops(num('BENCH_HOSTILE_CONCURRENT', 50), () => post(ENDPOINT, body));
  },
  // 2s: the same bodies trickled: each connection holds a growing part of its body for seconds.
  async '2s'() {
    const bytes = Buffer.from(`{"client":"nobody","timestamp":${now()},"signature":"${WRONG_SIGNATURE}","message_info":{"content":"${'a'.repeat(8 * MB)}"}}`);
    const chunk = 64 * 1024;
    const everyMs = (num('HOSTILE_TRICKLE_SECONDS', 4.5) * 1000) / Math.ceil(bytes.length / chunk);
    const head = `POST ${ENDPOINT.pathname} HTTP/1.1\r\nHost: ${ENDPOINT.host}\r\nContent-Type: application/json\r\nContent-Length: ${bytes.length}\r\n\r\n`;
    extra['trickle'] = `${Math.round((chunk / everyMs) * 1000 / 1024)} KiB/s per connection`;
    await loops(num('BENCH_HOSTILE_CONCURRENT', 50), () => raw(Number(ENDPOINT.port), head, { bytes, chunk, everyMs }));
  },
  // 3: GET /assets/ (a folder of the console build) on the console listener, and requests
  // without Host on the endpoint, each from its own loops.
  async '3'() {
    const consoleUrl = new URL('/assets/', env('HOSTILE_CONSOLE'));
    const agent = keepAlive(64);
    const n = num('BENCH_HOSTILE_FLOOD_CONNECTIONS', 8);
    await Promise.all([
      loops(n, () => post(consoleUrl, '', { agent, method: 'GET' })),
      loops(n, () => raw(Number(ENDPOINT.port), 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n')),
    ]);
  },
  // 4: unsigned requests claiming the real client, from many addresses (5 log rows per address
  // and minute are kept apart before refusals are counted together; each address has 100 refusals
  // before its 429s).
  async '4'() {
    const addresses = Array.from({ length: num('BENCH_HOSTILE_ADDRESSES', 1000) }, (_, i) => `127.1.${Math.floor(i / 250)}.${(i % 250) + 1}`);
    const perAddress = addresses.map(() => keepAlive(2));
    let n = 0;
    await loops(num('BENCH_HOSTILE_FLOOD_CONNECTIONS', 32), () => {
      const i = n++ % addresses.length;
      const body = `{"client":"honest","timestamp":${now()},"signature":"${WRONG_SIGNATURE}","message_info":{"event_type":"auto_dialog","msg_id":"flood-${n}","from_user_id":"cust-1","from_user_type":2,"content":"where is my order?"}}`;
      return post(ENDPOINT, body, { agent: perAddress[i]!, localAddress: addresses[i]! });
    });
  },
  // 5: a signed client stores messages with ~9.5 MB of unknown fields each, in one conversation.
  async '5'() {
    const agent = keepAlive(1);
    const filler = 'x'.repeat(num('BENCH_HOSTILE_STUFF_BYTES', 9_500_000));
    const times: number[] = [];
    for (let i = 0; i < num('BENCH_HOSTILE_STUFF_MESSAGES', 12) && running; i++) {
      // Lines of the integrator's own bot (from_user_type 4) to the customer: in the customer's
      // conversation and in its context, but asking no reply of their own (a conversation gets 6 a minute).
      const info = { event_type: 'auto_dialog', msg_id: `stuff-${i}`, from_user_id: 'shop-bot', from_user_type: 4, to_user_id: 'victim', content: 'The Aurora desk lamp is in stock.', x_attachment_meta: { blob: filler } };
      const body = Buffer.from(signBody('stuffer', env('HOSTILE_STUFFER_SECRET'), info));
      const t0 = performance.now();
      await post(ENDPOINT, body, { agent });
      times.push(Math.round(performance.now() - t0));
    }
    extra['ms per message'] = times.join(', ');
  },
  // 6: a second client's auto_dialog messages, each from its own customer: 130 replies due to a send_url that never answers.
  async '6'() {
    const agent = keepAlive(8);
    const total = num('BENCH_HOSTILE_DEAD_MESSAGES', 130);
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (running && next < total) {
        const i = next++;
        const info = { event_type: 'auto_dialog', msg_id: `dead-${i}`, from_user_id: `dead-cust-${i}`, from_user_type: 2, content: 'How long does shipping take for the Falcon drone?' };
        await post(ENDPOINT, signBody('deadend', env('HOSTILE_DEADEND_SECRET'), info), { agent });
      }
    }));
  },
};

process.on('message', (m) => {
  if (m !== 'stop') return;
  running = false;
  for (const s of sockets) s.destroy();
  for (const a of agents) a.destroy();
  setTimeout(() => {
    process.send!({ tally: { statuses, errors, requests, extra } }, () => process.exit(0));
  }, 200);
});

const attack = attacks[ATTACK];
if (!attack) throw new Error(`attacker: unknown attack "${ATTACK}"`);
const finite = ATTACK === '5' || ATTACK === '6';
await attack().then(() => {
  if (finite && running) process.send!('done');
});
