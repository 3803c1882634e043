import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac, timingSafeEqual } from 'node:crypto';
import canonicalize from 'canonicalize';

export interface Received {
  /** Real time (Date.now) when it arrived. */
  at: number;
  /**
   * The receiver's own clock when it arrived (ms), if the receiver was given one: what the 300 s
   * window of section 7 is checked against. A test with a hand-moved clock passes that clock.
   */
  clockAt?: number;
  headers: IncomingHttpHeaders;
  body: { client: string; timestamp: number; signature: string; message_info: Record<string, unknown> };
  key: string;
}

/** `hold`: the answer waits for it (a receiver slow to answer, under the test's control). */
export type Responder = (r: Received, index: number) => { status: number; headers?: Record<string, string>; hold?: Promise<void> };

export interface Receiver {
  url: string;
  received: Received[];
  /** Decides the answer to each delivery; 200 by default. */
  respond: Responder;
  close(): Promise<void>;
}

/** How far a delivery's `timestamp` may be from the receiver's clock (sections 3 and 7). */
export const DELIVERY_TOLERANCE_SECONDS = 300;

function signatureMatches(r: Received, secret: string): boolean {
  const data = `${r.body.timestamp}.${r.body.client}.${canonicalize(r.body.message_info)}`;
  const expected = createHmac('sha256', secret).update(data).digest();
  const given = Buffer.from(String(r.body.signature), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * What an integrator's receiver would refuse this delivery for, or null when it is good: the
 * signature with `secret`, and, when the receiver has a clock (`clockAt`), the timestamp within
 * 300 s of that clock, so a delivery re-sent with a stale signature is refused as it would be.
 */
export function deliveryProblem(r: Received, secret: string, toleranceSeconds = DELIVERY_TOLERANCE_SECONDS): string | null {
  if (!Number.isInteger(r.body.timestamp)) return `timestamp ${String(r.body.timestamp)} is not integer Unix seconds`;
  if (r.clockAt !== undefined) {
    const skew = Math.floor(r.clockAt / 1000) - r.body.timestamp;
    if (Math.abs(skew) > toleranceSeconds) return `timestamp ${r.body.timestamp} is ${skew} s from the receiver's clock (${Math.floor(r.clockAt / 1000)}), more than ${toleranceSeconds} s`;
  }
  if (!signatureMatches(r, secret)) return `signature does not match timestamp ${r.body.timestamp} with the secret ending ${secret.slice(-4)}`;
  return null;
}

/** An integrator's receiver, written from section 7 alone: it verifies what it gets (see deliveryProblem). */
export function verifyDelivery(r: Received, secret: string): boolean {
  return deliveryProblem(r, secret) === null;
}

export interface ReceiverOptions {
  /** The receiver's clock (ms): each delivery's `clockAt`, which verifyDelivery checks the 300 s window against. */
  now?: () => number;
}

/** A receiver on 127.0.0.1; give it `now` (the test's clock, or Date.now) to have the timestamp window checked. */
export async function startReceiver(path = '/hook', options: ReceiverOptions = {}): Promise<Receiver> {
  const received: Received[] = [];
  const state = { respond: ((): { status: number } => ({ status: 200 })) as Responder };
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const r: Received = { at: Date.now(), headers: req.headers, body: JSON.parse(text) as Received['body'], key: String(req.headers['idempotency-key']) };
      if (options.now) r.clockAt = options.now();
      received.push(r);
      const answer = state.respond(r, received.length - 1);
      void (answer.hold ?? Promise.resolve()).then(() => {
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
        res.end('{}');
      });
    });
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    received,
    get respond() {
      return state.respond;
    },
    set respond(fn: Responder) {
      state.respond = fn;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Waits (in real time, for I/O to finish) until `check` holds; time-based behaviour still moves only with the manual clock. */
export async function eventually<T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let value: T | undefined | false;
    try {
      value = await check();
    } catch {
      value = undefined; // not there yet (e.g. the row does not exist)
    }
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Lets pending I/O settle, for asserting that nothing happens. */
export function settle(ms = 100): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
