import { z } from 'zod';
import type { Store } from '../store/index.ts';
import type { DeliveryRow } from '../store/deliveries.ts';
import type { ActiveClient } from '../auth/client-registry.ts';
import type { MessageWriter } from '../conversations/message-service.ts';
import type { Clock } from '../../shared/clock.ts';
import { effectiveAutoReply } from '../../shared/conversation.ts';
import { canonicalJson } from '../auth/canonical-json.ts';
import { sign, signingString } from '../auth/signature.ts';
import { classify, nextDelay, parseRetryAfter, type SendResult, type Verdict } from './retry-policy.ts';
import type { Sender } from './sender.ts';
import { createTurnSlicer, type TurnSlicer } from '../loop/turn-slicer.ts';
import { idleWaiters } from '../loop/quiesce.ts';
import { pickFair, type LaneSource } from './fair-share.ts';

/**
 * Lanes (origins) of one client looked at per scan. A client sending to more receivers than this
 * at once has its further ones served as the first drain; no other client waits on them.
 */
const LANES_PER_CLIENT = 64;

/**
 * Rows re-read from the outbox are checked before they are signed and sent: an auto reply
 * (from_user_type 4) or an operator reply (3, naming its operator; website_dialog in web
 * conversations), section 7.
 */
const deliveryBase = z.looseObject({
  msg_id: z.string().min(1),
  reply_to: z.array(z.string()),
  conversation_id: z.string(),
  to_user_id: z.string().optional(),
  content: z.string(),
  message_type: z.literal(1),
  create_timestamp: z.number().int(),
});
export const deliveryInfoSchema = z.union([
  deliveryBase.extend({ event_type: z.literal('auto_dialog'), from_user_type: z.literal(4) }),
  deliveryBase.extend({
    event_type: z.enum(['auto_dialog', 'website_dialog']),
    from_user_type: z.literal(3),
    operator: z.object({ id: z.string().min(1), name: z.string().min(1) }),
  }),
]);

export interface OutboxDeps {
  store: Store;
  writer: MessageWriter;
  send: Sender;
  clock: Clock;
  lookupClient: (clientId: string) => ActiveClient | undefined;
  /** Requests to receivers in flight at once, across conversations. */
  concurrency: number;
  /** Of those, at most this many for one client; `concurrency` when absent. */
  perClient?: number;
  /** And at most this many to one send_url origin (scheme://host:port), whatever the client; `concurrency` when absent. */
  perOrigin?: number;
  /** How often to look for work nobody announced (a retry from the CLI). */
  pollMs: number;
  random?: () => number;
  onAttempt?: (verdict: Verdict | 'cancelled', conversationId: string) => void;
  /** A delivery died and its conversation newly needs a human: the console alerts once. */
  onAlert?: (conversationId: string, reason: 'delivery_failed') => void;
  log: (line: string) => void;
  /** Starts taken deliveries a few per turn (shared with the reply scheduler); own one when absent. */
  slicer?: TurnSlicer;
}

/**
 * The durable outbox worker. Deliveries live in SQLite; this loop sends the due ones, its slots
 * shared between clients and between receivers (fair-share.ts), oldest first within each and one
 * at a time per conversation, re-checks the conversation's auto-reply state before every attempt
 * of an auto reply, and records each attempt with its verdict. At least once: a crash between a
 * receiver's 2xx and our record of it means one more attempt with the same Idempotency-Key.
 */
export function createOutbox(deps: OutboxDeps) {
  /** Every delivery taken and not yet recorded: never taken again meanwhile. */
  const inFlight = new Map<number, DeliveryRow>();
  /**
   * Taken deliveries whose request has not ended yet: what `concurrency` bounds. One whose answer
   * came only waits for its record's commit, which needs no socket, so its slot goes to the next
   * at once. Holding slots through the commit capped a burst at `concurrency` deliveries per
   * (request + commit) time: the writer's 80-200 ms under load left slots idle and replies queued.
   */
  let active = 0;
  /** `active`, per client and per origin: what the caps bound. */
  const activeByClient = new Map<string, number>();
  const activeByOrigin = new Map<string, number>();
  const perClient = deps.perClient ?? deps.concurrency;
  const perOrigin = deps.perOrigin ?? deps.concurrency;
  const bump = (counts: Map<string, number>, key: string, by: number): void => {
    const n = (counts.get(key) ?? 0) + by;
    if (n === 0) counts.delete(key);
    else counts.set(key, n);
  };
  /** Deliveries whose request went out and whose attempt is not recorded yet: a Cancel cannot recall that try. */
  const tried = new Set<number>();
  const idle: Array<() => void> = [];
  /** Woken whenever an attempt leaves `inFlight`. */
  const ended = idleWaiters();
  let cancelWake: (() => void) | null = null;
  let stopped = false;
  let scanning = false;
  let again = false;
  let requested = false;
  const slicer = deps.slicer ?? createTurnSlicer();

  /** Many attempts end in one turn of the loop; they share one scan. */
  function requestScan(): void {
    if (requested || stopped) return;
    requested = true;
    setImmediate(() => {
      requested = false;
      scan();
    });
  }

  function settleIdle(): void {
    ended.release();
    if (inFlight.size === 0) while (idle.length) idle.shift()!();
  }

  async function record(d: DeliveryRow, startedAt: number, durationMs: number, result: SendResult): Promise<Verdict> {
    let verdict = classify(result);
    const roundAttempts = d.roundAttempts + 1;
    let delay: number | null = 0;
    if (verdict === 'retry') {
      delay = nextDelay(roundAttempts, result.kind === 'response' ? parseRetryAfter(result.retryAfter, deps.clock.now()) : null, deps.random);
      if (delay === null) verdict = 'dead';
    }
    const now = deps.clock.now();
    const written = await deps.writer.submit({
      kind: 'delivery_attempt',
      conversationId: d.conversationId,
      deliveryId: d.id,
      attempt: d.attempts + 1,
      startedAt,
      durationMs,
      status: result.kind === 'response' ? result.status : null,
      error: result.kind === 'error' ? result.error : result.status >= 300 ? `HTTP ${result.status}` : null,
      outcome: verdict,
      state: verdict === 'retry' ? 'pending' : verdict,
      nextAttemptAt: verdict === 'retry' ? now + (delay ?? 0) : now,
      now,
    });
    // At once, in the turn the record committed: a Cancel committed after it must not be told a try is out.
    tried.delete(d.id);
    if (written?.kind === 'changed' && written.alert) deps.onAlert?.(d.conversationId, written.alert);
    return verdict;
  }

  /** `release` frees the delivery's slot; it stays taken (in flight) until its record commits. */
  async function attempt(d: DeliveryRow, release: () => void): Promise<void> {
    const now = deps.clock.now();
    // Taken a turn or more ago: an operator may have cancelled it since (the console's Cancel).
    // Cancelled is final: it is never sent, nor recorded as tried.
    if (deps.store.deliveries.stateOf(d.id) !== 'pending') {
      deps.onAttempt?.('cancelled', d.conversationId);
      return;
    }
    // A human took over after an auto reply was made: it is never sent. An operator's own answer
    // is that human speaking, so the takeover never cancels it.
    if (d.kind === 'auto') {
      const conv = deps.store.conversations.byId(d.conversationId);
      const state = conv ? effectiveAutoReply(conv.autoReply, conv.pausedUntil, now) : 'stopped';
      if (state !== 'active') {
        await deps.writer.submit({ kind: 'delivery_cancel', deliveryId: d.id, reason: `auto-reply ${state} when the delivery was due`, now });
        deps.onAttempt?.('cancelled', d.conversationId);
        return;
      }
    }
    const client = deps.lookupClient(d.clientId);
    const parsed = deliveryInfoSchema.safeParse(JSON.parse(d.messageInfo));
    let result: SendResult;
    const startedAt = now;
    const t0 = performance.now();
    if (!parsed.success) {
      result = { kind: 'error', error: `stored delivery is malformed: ${parsed.error.issues[0]?.message ?? 'invalid'}`, permanent: true };
    } else if (!client?.enabled || client.keys.length === 0) {
      result = { kind: 'error', error: `client ${d.clientId} is disabled or has no usable secret to sign with`, permanent: false };
    } else {
      const timestamp = Math.floor(now / 1000);
      const signature = sign(client.keys[0]!, signingString(timestamp, client.id, canonicalJson(parsed.data)));
      const body = JSON.stringify({ client: client.id, timestamp, signature, message_info: parsed.data });
      tried.add(d.id);
      result = await deps.send({ url: d.sendUrl, body, idempotencyKey: d.replyMsgId });
    }
    release();
    try {
      const verdict = await record(d, startedAt, performance.now() - t0, result);
      deps.onAttempt?.(verdict, d.conversationId);
    } finally {
      tried.delete(d.id);
    }
  }

  function scan(): void {
    if (stopped) return;
    if (scanning) {
      again = true;
      return;
    }
    scanning = true;
    try {
      const now = deps.clock.now();
      const free = deps.concurrency - active;
      if (free > 0) {
        const source: LaneSource = {
          clients: () => deps.store.deliveries.pendingClients(),
          lanes: (clientId) => deps.store.deliveries.pendingLanes(clientId, LANES_PER_CLIENT),
          due: (clientId, origin, limit, read) => {
            const except = [...read];
            for (const h of inFlight.values()) if (h.clientId === clientId && h.origin === origin) except.push(h.id);
            return deps.store.deliveries.dueInLane(clientId, origin, now, limit, except);
          },
        };
        const held = { client: (id: string) => activeByClient.get(id) ?? 0, origin: (origin: string) => activeByOrigin.get(origin) ?? 0 };
        for (const d of pickFair(source, held, { free, perClient, perOrigin }, now)) {
          inFlight.set(d.id, d);
          active++;
          bump(activeByClient, d.clientId, 1);
          bump(activeByOrigin, d.origin, 1);
          let released = false;
          const release = (): void => {
            if (released) return;
            released = true;
            active--;
            bump(activeByClient, d.clientId, -1);
            bump(activeByOrigin, d.origin, -1);
            requestScan();
          };
          // Taken now (in flight, holding its slot), started a few per turn: a committed batch's
          // checks, signatures and request starts would otherwise all run in this one turn. Ahead
          // of quiet periods that ended meanwhile: its slot is held until the request ends.
          slicer.run(() => {
            if (stopped) {
              // Not sent yet: it stays pending in the database and goes after the restart.
              release();
              inFlight.delete(d.id);
              settleIdle();
              return;
            }
            attempt(d, release)
              .catch((error: unknown) => deps.log(`delivery ${d.id} attempt failed: ${(error as Error).message}`))
              .finally(() => {
                release();
                inFlight.delete(d.id);
                settleIdle();
                requestScan();
              });
          }, 'first');
        }
      }
      // A due delivery that was not taken is waiting behind one in flight (of its conversation, or
      // holding its client's or origin's share), whose end rescans.
      const next = deps.store.deliveries.nextDueAt();
      const wait = next === null || next <= now ? deps.pollMs : Math.min(next - now, deps.pollMs);
      cancelWake?.();
      cancelWake = deps.clock.after(wait, scan);
    } finally {
      scanning = false;
      if (again) {
        again = false;
        requestScan();
      }
    }
  }

  return {
    start: scan,
    /** A delivery was committed or retried: look now rather than at the next poll. */
    notify: requestScan,
    inFlight: () => inFlight.size,
    /** Taken deliveries not yet recorded, plus a scan asked for and not run yet; for `RunningService.quiesce`. */
    busy: (): number => inFlight.size + (requested ? 1 : 0),
    /** Resolves when the next attempt in flight is recorded (or dropped at a stop). */
    attemptEnded: (): Promise<void> => ended.wait(),
    /** A try of this delivery is on its way to the receiver, or answered and not yet recorded. */
    trying: (id: number): boolean => tried.has(id),
    /** Stops taking work and waits (bounded) for attempts in flight to be recorded. */
    async stop(graceMs = 5000): Promise<void> {
      stopped = true;
      cancelWake?.();
      if (inFlight.size === 0) return;
      await Promise.race([new Promise<void>((r) => idle.push(r)), new Promise((r) => setTimeout(r, graceMs).unref())]);
    },
  };
}

export type Outbox = ReturnType<typeof createOutbox>;
