import { z } from 'zod';
import type { ConsoleEvent } from '../../shared/console-api.ts';
import { consoleEventSchema } from './console-event-schema.ts';

/**
 * The console events' wire format between nodes (PostgreSQL NOTIFY payloads), with no I/O: what a
 * node sends for an event, and what a node makes of what it receives.
 *
 *   {"v":1,"n":"node-a","r":"k3J9xQ","s":42,"e":{…the event…}}
 *   {"v":1,"n":"node-a","r":"k3J9xQ","s":43,"p":1,"of":3,"d":"<base64>"}   one part of an event too big for one
 *
 *   {"v":1,"n":"node-a","r":"k3J9xQ","s":43,"h":1}  hello: node-a listens now (it started, or its link came back)
 *
 * `n` the sending node, `r` its run (new at each start), `s` its sequence number (1, 2, … per run;
 * the parts of one event share theirs; a hello is not an event and carries the number its next
 * event will have, taking none). A receiver that sees a number skipped knows it missed
 * events (the sender dropped them, or its own link was down) and says so with a resync.
 */

/** NOTIFY refuses a payload of 8000 bytes or more (PostgreSQL's NOTIFY_PAYLOAD_MAX_LENGTH with the default 8 kB block). */
export const NOTIFY_MAX_BYTES = 7999;
/** Raw bytes of an oversize event per part: 5,400 → 7,200 base64 characters, plus the envelope's (under 150 bytes). */
const PART_BYTES = 5400;
/** An event in more parts than this (over 86 kB; the biggest realistic one is a few kB) is dropped. */
export const MAX_PARTS = 16;

export const NODE_ID = /^[A-Za-z0-9._:-]{1,64}$/;

const envelopeSchema = z.object({
  v: z.literal(1),
  n: z.string().regex(NODE_ID),
  r: z.string().min(1).max(32),
  s: z.number().int().positive(),
  e: z.unknown().optional(),
  p: z.number().int().min(1).max(MAX_PARTS).optional(),
  of: z.number().int().min(2).max(MAX_PARTS).optional(),
  d: z.string().max(NOTIFY_MAX_BYTES).optional(),
  h: z.literal(1).optional(),
});

/** The payload saying `node` listens now: the others tell it again what it could not have heard (who is online on them). `next`: its next event's number. */
export function encodeHello(node: string, run: string, next: number): string {
  return JSON.stringify({ v: 1, n: node, r: run, s: next, h: 1 });
}

/** The payloads for one event (one, or its parts in order), or null when it is too big even in parts. */
export function encodeEvent(node: string, run: string, seq: number, event: ConsoleEvent): string[] | null {
  const whole = JSON.stringify({ v: 1, n: node, r: run, s: seq, e: event });
  if (Buffer.byteLength(whole) <= NOTIFY_MAX_BYTES) return [whole];
  // Parts of the event's bytes, not of its characters: a split inside a character is joined again before decoding.
  const bytes = Buffer.from(JSON.stringify(event));
  const of = Math.ceil(bytes.length / PART_BYTES);
  if (of > MAX_PARTS) return null;
  return Array.from({ length: of }, (_, i) =>
    JSON.stringify({ v: 1, n: node, r: run, s: seq, p: i + 1, of, d: bytes.subarray(i * PART_BYTES, (i + 1) * PART_BYTES).toString('base64') }),
  );
}

/** What a received payload came to. */
export type Received =
  | { kind: 'event'; event: ConsoleEvent; node: string; seq: number; missed: number }
  | { kind: 'hello'; node: string }
  /** A part of an event; the rest is still to come. */
  | { kind: 'partial' }
  | { kind: 'own' }
  | { kind: 'duplicate'; node: string; seq: number }
  /** Not ours to read: not JSON, not an envelope, a part out of order, or an event this version does not know. */
  | { kind: 'malformed'; why: string; missed: number };

/**
 * Reads payloads from other nodes. `missed`: how many of that node's events never arrived before
 * this one (a gap in its numbers); a node's first event seen, or its first after a restart, misses none.
 */
export function createDecoder(self: string) {
  const last = new Map<string, { run: string; seq: number }>();
  const partial = new Map<string, { run: string; seq: number; of: number; parts: Buffer[] }>();

  /** Counts `seq` as seen from `node`; the events skipped since the last one, or -1 for one seen already. */
  function advance(node: string, run: string, seq: number): number {
    const prev = last.get(node);
    if (prev && prev.run === run && seq <= prev.seq) return -1;
    last.set(node, { run, seq });
    return prev && prev.run === run ? seq - prev.seq - 1 : 0;
  }

  function event(node: string, run: string, seq: number, raw: unknown): Received {
    const missed = advance(node, run, seq);
    if (missed < 0) return { kind: 'duplicate', node, seq };
    const checked = consoleEventSchema.safeParse(raw);
    if (!checked.success) return { kind: 'malformed', why: `event ${seq} from ${node}: ${z.prettifyError(checked.error).replace(/\n/g, ' ')}`, missed };
    return { kind: 'event', event: checked.data, node, seq, missed };
  }

  return {
    receive(payload: string): Received {
      let json: unknown;
      try {
        json = JSON.parse(payload);
      } catch {
        return { kind: 'malformed', why: `not JSON: ${payload.slice(0, 80)}`, missed: 0 };
      }
      const env = envelopeSchema.safeParse(json);
      if (!env.success) return { kind: 'malformed', why: `not an event envelope: ${payload.slice(0, 80)}`, missed: 0 };
      const { n, r, s, e, p, of, d, h } = env.data;
      if (n === self) return { kind: 'own' };
      if (h === 1) return { kind: 'hello', node: n };
      if (p === undefined) return e === undefined ? { kind: 'malformed', why: `no event in ${s} from ${n}`, missed: 0 } : event(n, r, s, e);
      if (of === undefined || d === undefined || p > of) return { kind: 'malformed', why: `part ${p} of ${s} from ${n} is incomplete`, missed: 0 };
      const open = partial.get(n);
      if (p === 1) partial.set(n, { run: r, seq: s, of, parts: [Buffer.from(d, 'base64')] });
      else if (open && open.run === r && open.seq === s && open.of === of && open.parts.length === p - 1) open.parts.push(Buffer.from(d, 'base64'));
      else {
        // Its earlier parts never came: the event is lost, and the gap in numbers will say so.
        partial.delete(n);
        return { kind: 'malformed', why: `part ${p} of ${s} from ${n} without the parts before it`, missed: 0 };
      }
      const now = partial.get(n)!;
      if (now.parts.length < of) return { kind: 'partial' };
      partial.delete(n);
      let raw: unknown;
      try {
        raw = JSON.parse(Buffer.concat(now.parts).toString('utf8'));
      } catch {
        return { kind: 'malformed', why: `the parts of ${s} from ${n} are not JSON`, missed: Math.max(0, advance(n, r, s)) };
      }
      return event(n, r, s, raw);
    },
    /** Forgets what was seen (after this node's link was down: what comes next is a fresh start). */
    reset(): void {
      last.clear();
      partial.clear();
    },
  };
}
