import { Agent, createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac, createSecretKey } from 'node:crypto';
import canonicalize from 'canonicalize';
import { percentile } from '../lib.ts';

/**
 * The honest side of bench/hostile: a signed client sending at a fixed rate (open loop: a stalled
 * server does not slow the schedule, so a stall shows in the latencies instead of hiding as fewer
 * requests), the receiver its auto replies are delivered to, and the black hole a second client's
 * deliveries go to (attack 6).
 */

/** The honest client's own address: every attacker sends from other 127/8 addresses, as another host would. */
export const HONEST_ADDRESS = '127.0.0.2';

export type MessageInfo = Record<string, unknown>;

/** A signed envelope (protocol section 3) as a JSON string. */
export function signBody(clientId: string, secret: string, info: MessageInfo): string {
  const timestamp = Math.floor(Date.now() / 1000);
  const key = createSecretKey(Buffer.from(secret, 'utf8'));
  const signature = createHmac('sha256', key).update(`${timestamp}.${clientId}.${canonicalize(info)}`).digest('hex');
  return JSON.stringify({ client: clientId, signature, timestamp, message_info: info });
}

export interface Answer {
  status: number;
  /** Socket error or time-out, when there was no answer. */
  error: string | null;
  endedAt: number;
  body: string;
}

/** POST a JSON body and read the whole answer (never rejects: a failure is an answer with `error`). */
export function postJson(url: URL, body: string | Buffer, agent: Agent, timeoutMs = 60_000): Promise<Answer> {
  return new Promise((resolve) => {
    const done = (a: Omit<Answer, 'endedAt'>): void => resolve({ ...a, endedAt: performance.now() });
    const req = request(url, { method: 'POST', agent, localAddress: HONEST_ADDRESS, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ status: res.statusCode ?? 0, error: null, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (e) => done({ status: res.statusCode ?? 0, error: e.message, body: '' }));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timed out')));
    req.on('error', (e) => done({ status: 0, error: (e as NodeJS.ErrnoException).code ?? e.message, body: '' }));
    req.end(body);
  });
}

export interface Sample {
  phase: string;
  eventType: string;
  msgId: string;
  /** From the time the request was due (not sent): time spent queued behind a stall counts. */
  latencyMs: number;
  status: number;
  error: string | null;
  acceptedAt: number | null;
}

export interface HonestOptions {
  endpoint: string;
  clientId: string;
  secret: string;
  perSecond: number;
  content: (n: number) => string;
  senders: number;
}

export function honestClient(o: HonestOptions) {
  const url = new URL(o.endpoint);
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const samples: Sample[] = [];
  const inFlight = new Set<Promise<void>>();
  let phase = 'warmup';
  let running = false;
  let loop: Promise<void> | null = null;

  async function one(n: number, due: number): Promise<void> {
    // Three in four auto_dialog (stored, answered later, the reply delivered), one in four website_dialog (answered at once).
    const eventType = n % 4 === 3 ? 'website_dialog' : 'auto_dialog';
    const sender = (n * 7) % o.senders;
    const msgId = `h-${n}`;
    const info = { event_type: eventType, msg_id: msgId, from_user_id: `cust-${sender}`, from_user_nickname: `Customer ${sender}`, from_user_type: 2, content: o.content(n), create_timestamp: Math.floor(Date.now() / 1000) };
    const p = phase;
    const a = await postJson(url, signBody(o.clientId, o.secret, info), agent);
    const ok = a.status >= 200 && a.status < 300;
    samples.push({ phase: p, eventType, msgId, latencyMs: a.endedAt - due, status: a.status, error: a.error, acceptedAt: ok && eventType === 'auto_dialog' ? a.endedAt : null });
  }

  return {
    samples,
    setPhase(next: string): void {
      phase = next;
    },
    start(): void {
      running = true;
      const t0 = performance.now();
      loop = (async () => {
        for (let n = 0; running; n++) {
          const due = t0 + (n * 1000) / o.perSecond;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          if (!running) break;
          const p = one(n, due);
          inFlight.add(p);
          void p.finally(() => inFlight.delete(p));
        }
      })();
    },
    /** Stops sending and waits for the answers still due. */
    async stop(): Promise<void> {
      running = false;
      await loop;
      await Promise.all(inFlight);
      agent.destroy();
    },
  };
}

export interface PhaseFigures {
  requests: number;
  ok: number;
  fiveXx: number;
  /** Non-2xx other than 5xx, plus socket errors and time-outs. */
  otherFailures: number;
  /** Every failure by status (or error code). */
  failures: Record<string, number>;
  p50: number;
  p99: number;
}

export function phaseFigures(samples: Sample[], phase: string): PhaseFigures {
  const mine = samples.filter((s) => s.phase === phase);
  const sorted = Float64Array.from(mine.map((s) => s.latencyMs)).sort();
  const ok = mine.filter((s) => s.status >= 200 && s.status < 300).length;
  const fiveXx = mine.filter((s) => s.status >= 500).length;
  const failures: Record<string, number> = {};
  for (const s of mine) {
    if (s.status >= 200 && s.status < 300) continue;
    const key = s.error ?? String(s.status);
    failures[key] = (failures[key] ?? 0) + 1;
  }
  return { requests: mine.length, ok, fiveXx, otherFailures: mine.length - ok - fiveXx, failures, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/** Message accepted → its reply received, for the auto_dialog messages of a phase; `missing`: never arrived. */
export function deliveryFigures(samples: Sample[], phase: string, arrivals: Map<string, number>): { p50: number; p99: number; missing: number } {
  const accepted = samples.filter((s) => s.phase === phase && s.acceptedAt !== null);
  const waits = accepted.filter((s) => arrivals.has(s.msgId)).map((s) => arrivals.get(s.msgId)! - s.acceptedAt!);
  const sorted = Float64Array.from(waits).sort();
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), missing: accepted.length - waits.length };
}

/** The send_url receiver: answers 200 at once and notes when each customer message's reply arrived. */
export async function startReceiver() {
  const arrivals = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = performance.now();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { message_info?: { reply_to?: string[] } };
        for (const id of body.message_info?.reply_to ?? []) if (!arrivals.has(id)) arrivals.set(id, now);
      } catch {
        // Not a delivery: nothing to note.
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    close: () => server.close(),
  };
}

/** A send_url that takes every delivery and never answers, until it recovers (then it answers 200). */
export async function startBlackHole() {
  let dead = false;
  const held = new Set<ServerResponse>();
  let received = 0;
  const server = createServer((req, res) => {
    received++;
    req.resume();
    if (!dead) return void req.on('end', () => res.writeHead(200).end('{}'));
    held.add(res);
    res.on('close', () => held.delete(res));
  });
  // Node's own request time-out would answer for us after 300 s; the service gives up long before.
  server.requestTimeout = 0;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const recover = (): void => {
    dead = false;
    for (const res of held) res.writeHead(200).end('{}');
    held.clear();
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    die(): void {
      dead = true;
      received = 0;
    },
    recover,
    /** Deliveries taken since die(), and those held unanswered now. */
    received: () => received,
    held: () => held.size,
    close(): void {
      recover();
      server.close();
      server.closeAllConnections();
    },
  };
}
