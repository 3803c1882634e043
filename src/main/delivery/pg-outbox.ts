import type pg from 'pg';
import type { ActiveClient } from '../auth/client-registry.ts';
import type { Clock } from '../../shared/clock.ts';
import { effectiveAutoReply } from '../../shared/conversation.ts';
import { createTurnSlicer, type TurnSlicer } from '../loop/turn-slicer.ts';
import { idleWaiters } from '../loop/quiesce.ts';
import { pgDeliveryQueries } from '../store/pg/delivery-queries.ts';
import { pgIngestStore } from '../store/pg/ingest-queries.ts';
import { createPgWorkQueue, WORK_LEASE_DEFAULTS, type ClaimedDelivery } from '../store/pg/leases/pg-leases.ts';
import type { SendResult, Verdict } from './retry-policy.ts';
import type { Sender } from './sender.ts';
import { claimFair, type ClaimSource } from './pg-fair-claim.ts';
import { outcomeOf, recordAttempt, signedRequest } from './pg-outbox-record.ts';

/** Lanes (origins) of one client looked at per scan, as on SQLite (outbox.ts). */
const LANES_PER_CLIENT = 64;

export interface PgOutboxDeps {
  pool: pg.Pool;
  send: Sender;
  clock: Clock;
  /** This node's id: the holder named in its leases (unique among the nodes sharing the database). */
  nodeId: string;
  lookupClient: (clientId: string) => ActiveClient | undefined;
  /** Requests to receivers in flight at once on this node. */
  concurrency: number;
  /** Of those, at most this many for one client on this node; `concurrency` when absent. */
  perClient?: number;
  /** And at most this many to one send_url origin on this node; `concurrency` when absent. */
  perOrigin?: number;
  /** How long a claim is this node's without renewal; WORK_LEASE_DEFAULTS.deliveryLeaseMs when absent. */
  leaseMs?: number;
  /** How often to look for work nobody announced here (another node's retry, a lease run out); 1 s when absent. */
  pollMs?: number;
  random?: () => number;
  onAttempt?: (verdict: Verdict | 'cancelled', conversationId: string) => void;
  /** A delivery died and its conversation newly needs a human (committed): the console alerts once. */
  onAlert?: (conversationId: string, reason: 'delivery_failed') => void;
  log: (line: string) => void;
  /** Starts claimed deliveries a few per turn; own one when absent. */
  slicer?: TurnSlicer;
}

/** The first wait before a failed step (the database unreachable) runs again; it doubles, up to a renewal's interval. */
const RETRY_STEP_MS = 1000;

interface Held {
  d: ClaimedDelivery;
  /** The request is on its way (or answered): a stop waits for its record rather than releasing it. */
  sending: boolean;
  /** Given back (stop) before it was sent: its task does nothing. */
  released: boolean;
  /** A renewal found the claim no longer this node's: it is not sent. */
  lost: boolean;
  /** The try was made and its result waits to be recorded (a failed record is tried again, never the send). */
  sent?: { verdict: ReturnType<typeof outcomeOf>['verdict']; attempt: Parameters<typeof recordAttempt>[3] };
  /** Steps that failed in a row (the database unreachable): the next waits longer. */
  failures: number;
}

/**
 * The outbox of one node among several on PostgreSQL (issue 30). As outbox.ts on SQLite: due
 * deliveries shared fairly between clients and receivers (pg-fair-claim.ts), oldest first and
 * one at a time per conversation (across all nodes: the claim's rule), the auto-reply state
 * re-checked before an auto reply goes, each try signed and sent through the same sender and
 * recorded by the same retry policy. Here each delivery taken is a lease (pg-delivery-leases.ts):
 * renewed every third of its length while held, named by the record of the try so that a node
 * whose lease ran out and was taken over changes nothing, and given back at a stop. A node that
 * dies mid-try leaves its deliveries to the others once their leases run out: at least once, the
 * same Idempotency-Key.
 */
export function createPgOutbox(deps: PgOutboxDeps) {
  const leaseMs = deps.leaseMs ?? WORK_LEASE_DEFAULTS.deliveryLeaseMs;
  const pollMs = deps.pollMs ?? 1000;
  const renewEveryMs = Math.max(1, Math.floor(leaseMs * WORK_LEASE_DEFAULTS.renewFraction));
  const perClient = deps.perClient ?? deps.concurrency;
  const perOrigin = deps.perOrigin ?? deps.concurrency;
  const queue = createPgWorkQueue(deps.pool);
  const reads = pgDeliveryQueries(deps.pool);
  const conversations = pgIngestStore(deps.pool).conversations;
  const slicer = deps.slicer ?? createTurnSlicer();

  /** Every delivery claimed and not yet recorded (or given back). */
  const inFlight = new Map<number, Held>();
  /** Claimed deliveries whose request has not ended: what the limits bound. */
  let active = 0;
  const activeByClient = new Map<string, number>();
  const activeByOrigin = new Map<string, number>();
  const bump = (counts: Map<string, number>, key: string, by: number): void => {
    const n = (counts.get(key) ?? 0) + by;
    if (n === 0) counts.delete(key);
    else counts.set(key, n);
  };
  const tried = new Set<number>();
  const idle: Array<() => void> = [];
  const ended = idleWaiters();
  let cancelWake: (() => void) | null = null;
  let cancelRenew: (() => void) | null = null;
  let stopped = false;
  let scanning = false;
  /** The scan running or last run: a stop waits for it, so claims it makes are given back before the pool closes. */
  let scanRun: Promise<void> = Promise.resolve();
  let again = false;
  let requested = false;

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

  function arm(wait: number): void {
    cancelWake?.();
    cancelWake = stopped ? null : deps.clock.after(wait, () => scan());
  }

  /** Every held lease, renewed in one statement every third of a lease. */
  function armRenewal(): void {
    cancelRenew = deps.clock.after(renewEveryMs, () => {
      cancelRenew = null;
      void renew().finally(() => {
        if (!stopped) armRenewal();
      });
    });
  }

  async function renew(): Promise<void> {
    const held = [...inFlight.values()].filter((h) => !h.released && !h.lost);
    if (held.length === 0) return;
    try {
      const kept = await queue.renewLeases(deps.nodeId, held.map((h) => h.d), deps.clock.now(), leaseMs);
      for (const h of held) {
        const until = kept.get(h.d.id);
        if (until !== undefined) h.d.lease = { ...h.d.lease, until };
        // Gone from this node's hands meanwhile (recorded), or sent and waiting for its record, which says whether the claim still held.
        else if (!h.lost && inFlight.get(h.d.id) === h && !h.sent) {
          h.lost = true;
          deps.log(`delivery ${h.d.id}: this node no longer holds its lease (claim ${h.d.lease.count}; taken over by another node or no longer pending)`);
        }
      }
    } catch (error) {
      // One failed renewal loses nothing: the lease lasts three of these.
      deps.log(`renewing ${held.length} delivery lease(s) failed: ${(error as Error).message}`);
    }
  }

  /** Before the try: cancelled meanwhile, or an auto reply whose conversation a human took over, is never sent. */
  async function cancelledBeforeTry(d: ClaimedDelivery, now: number): Promise<boolean> {
    if ((await reads.stateOf(d.id)) !== 'pending') return true;
    if (d.kind !== 'auto') return false;
    const conv = await conversations.byId(d.conversationId);
    const state = conv ? effectiveAutoReply(conv.autoReply, conv.pausedUntil, now) : 'stopped';
    if (state === 'active') return false;
    await reads.cancel(d.id, `auto-reply ${state} when the delivery was due`, now);
    return true;
  }

  async function attempt(h: Held, release: () => void): Promise<void> {
    const { d } = h;
    if (!h.sent) await send(h, release);
    if (!h.sent) return;
    const { verdict, attempt: made } = h.sent;
    const recorded = await recordAttempt(deps.pool, d, d.lease, made);
    tried.delete(d.id);
    if (recorded.kind === 'recorded' && recorded.alert) deps.onAlert?.(d.conversationId, 'delivery_failed');
    if (recorded.kind === 'lost') deps.log(`delivery ${d.id}: claim ${d.lease.count} was taken over by another node before this try (${verdict}) was recorded; that node's record stands`);
    deps.onAttempt?.(verdict, d.conversationId);
  }

  async function send(h: Held, release: () => void): Promise<void> {
    const { d } = h;
    const now = deps.clock.now();
    if (await cancelledBeforeTry(d, now)) {
      // The claim goes back too: an Undo of the stop that cancelled it makes it due again at once, not after this lease.
      await queue.releaseDelivery(d.id, d.lease);
      deps.onAttempt?.('cancelled', d.conversationId);
      return;
    }
    // Checked and marked in one turn: a stop either gives it back first, or waits for its record.
    if (h.released || h.lost) return;
    h.sending = true;
    const request = signedRequest(d, deps.lookupClient(d.clientId), now);
    const t0 = performance.now();
    let result: SendResult;
    if ('url' in request) {
      tried.add(d.id);
      result = await deps.send(request);
    } else result = request;
    release();
    const { verdict, outcome } = outcomeOf(d, result, deps.clock, deps.random);
    h.sent = { verdict, attempt: { startedAt: now, durationMs: performance.now() - t0, outcome, now: deps.clock.now() } };
  }

  function take(d: ClaimedDelivery): void {
    const h: Held = { d, sending: false, released: false, lost: false, failures: 0 };
    inFlight.set(d.id, h);
    active++;
    bump(activeByClient, d.clientId, 1);
    bump(activeByOrigin, d.origin, 1);
    let freed = false;
    const release = (): void => {
      if (freed) return;
      freed = true;
      active--;
      bump(activeByClient, d.clientId, -1);
      bump(activeByOrigin, d.origin, -1);
      requestScan();
    };
    const done = (): void => {
      release();
      tried.delete(d.id);
      if (inFlight.get(d.id) === h) inFlight.delete(d.id);
      settleIdle();
      requestScan();
    };
    const go = (): void => {
      attempt(h, release).then(done, (error: unknown) => {
        deps.log(`delivery ${d.id} attempt failed: ${(error as Error).message}`);
        // Still this node's (the renewals keep the lease): its step runs again here soon, rather
        // than waiting out the lease for another node. A failed record is recorded again, not re-sent.
        if (stopped || h.released || h.lost) return done();
        h.failures++;
        deps.clock.after(Math.min(RETRY_STEP_MS * 2 ** (h.failures - 1), renewEveryMs), go);
      });
    };
    slicer.run(() => {
      if (h.released) return release();
      go();
    }, 'first');
  }

  function scan(): void {
    if (stopped) return;
    if (scanning) {
      again = true;
      return;
    }
    scanning = true;
    scanRun = claimAndArm().finally(() => {
      scanning = false;
      if (again) {
        again = false;
        requestScan();
      }
    });
  }

  /** A claim failed: it may have committed with its answer lost, leaving rows leased here that this node does not know of. */
  let doubt = false;

  async function claimAndArm(): Promise<void> {
    try {
      if (doubt) {
        const given = await queue.releaseOrphanDeliveries(deps.nodeId, [...inFlight.keys()]);
        doubt = false;
        if (given > 0) deps.log(`outbox: gave back ${given} delivery claim(s) a failed claim had committed unseen`);
      }
      const now = deps.clock.now();
      const free = deps.concurrency - active;
      if (free > 0) {
        const source: ClaimSource = {
          clients: () => reads.pendingClients(),
          lanes: (clientId) => reads.pendingLanes(clientId, LANES_PER_CLIENT),
          claim: (lane, limit) => queue.claimDeliveries(deps.nodeId, now, limit, leaseMs, lane),
        };
        const held = { client: (id: string) => activeByClient.get(id) ?? 0, origin: (origin: string) => activeByOrigin.get(origin) ?? 0 };
        const claimed = await claimFair(source, held, { free, perClient, perOrigin }, now, (error) => {
          doubt = true;
          deps.log(`outbox: a claim failed after others succeeded; those go now: ${(error as Error).message}`);
        });
        // Stopped while claiming: nothing of it was tried, so it goes back at once.
        if (stopped) await Promise.all(claimed.map((d) => queue.releaseDelivery(d.id, d.lease)));
        else for (const d of claimed) take(d);
      }
      // Due work not claimed waits behind a try in flight (here or on another node), whose end
      // here rescans, or for a lease to run out: the poll looks again.
      const next = await reads.nextDueAt();
      const at = deps.clock.now();
      arm(next === null || next <= at ? pollMs : Math.min(next - at, pollMs));
    } catch (error) {
      doubt = true;
      deps.log(`outbox scan failed: ${(error as Error).message}`);
      arm(pollMs);
    }
  }

  return {
    start(): void {
      armRenewal();
      scan();
    },
    /** A delivery was committed or retried: look now rather than at the next poll. */
    notify: requestScan,
    inFlight: () => inFlight.size,
    /** Claimed deliveries not yet recorded, plus a scan asked for or running; for `RunningService.quiesce`. */
    busy: (): number => inFlight.size + (requested || scanning ? 1 : 0),
    /** Resolves when the next attempt in flight is recorded (or given back at a stop). */
    attemptEnded: (): Promise<void> => ended.wait(),
    /** A try of this delivery is on its way from this node, or answered and not yet recorded. */
    trying: (id: number): boolean => tried.has(id),
    /**
     * Stops claiming, gives back the claims not yet sent (another node takes them at once), and
     * waits (bounded) for the tries in flight to be recorded; a try still out after that keeps its
     * lease until it runs out.
     */
    async stop(graceMs = 5000): Promise<void> {
      stopped = true;
      cancelWake?.();
      cancelRenew?.();
      await scanRun;
      const unsent = [...inFlight.values()].filter((h) => !h.sending);
      for (const h of unsent) {
        h.released = true;
        inFlight.delete(h.d.id);
      }
      const given = await Promise.allSettled(unsent.map((h) => queue.releaseDelivery(h.d.id, h.d.lease)));
      for (const [i, r] of given.entries()) {
        if (r.status === 'rejected') deps.log(`delivery ${unsent[i]!.d.id}: giving its lease back failed (${(r.reason as Error).message}); another node takes it when the lease runs out`);
      }
      settleIdle();
      if (inFlight.size === 0) return;
      await Promise.race([new Promise<void>((r) => idle.push(r)), new Promise((r) => setTimeout(r, graceMs).unref())]);
    },
  };
}

export type PgOutbox = ReturnType<typeof createPgOutbox>;
