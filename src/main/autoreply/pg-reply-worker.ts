import { pgReplyLeases, type ClaimedReply } from '../store/pg/leases/pg-reply-leases.ts';
import { nextReplyDueAt } from '../store/pg/reply-queries.ts';
import { idleWaiters } from '../loop/quiesce.ts';
import { fireClaim, type FireDeps, type FireResult } from './pg-reply-fire.ts';

/** The first pause before a failed answer is made again; it doubles, up to a renewal's interval. */
const RETRY_STEP_MS = 1000;

export interface PgReplyWorkerDeps extends FireDeps {
  /** This node's id: the lease holder it writes (unique per running node). */
  nodeId: string;
  /** How long a claim is this node's without a renewal (default 60 s); renewed every third of it while the answer is made. */
  leaseMs?: number;
  /** How often it looks for due timers it was not told of (default 1 s): other nodes' messages, leases that ran out. */
  pollMs?: number;
  /** Answers in the making at once (default 4). */
  concurrency?: number;
  /** Each claim's end, for tests and metrics. */
  onFired?: (conversationId: string, result: FireResult) => void;
}

/**
 * The quiet-period auto reply across PostgreSQL nodes (issue 30): SQLite's in-memory timers
 * (reply-scheduler.ts) become due_replies rows, set by the ingest transaction, which any node's
 * worker claims when due. A claim is a lease this node renews while its engine works; a node that
 * dies stops renewing, and another claims the timer once the lease has run out. The worker looks
 * for due timers every pollMs, when told (notify: a reply was scheduled here), and at the
 * earliest due time it knows, on the injected clock.
 */
export function createPgReplyWorker(deps: PgReplyWorkerDeps) {
  const leaseMs = deps.leaseMs ?? 60_000;
  const pollMs = deps.pollMs ?? 1_000;
  const concurrency = deps.concurrency ?? 4;
  const leases = pgReplyLeases(deps.pool);
  /** Claims being answered here, by conversation; renewals update their lease. */
  const held = new Map<string, ClaimedReply>();
  const inFlight = new Set<Promise<void>>();
  const fired = idleWaiters();
  /** Answers pausing before they are made again: a stop wakes them to end. */
  const pauses = new Set<() => void>();
  let running = false;
  let looking: Promise<void> | null = null;
  let lookAgain = false;
  let cancelWake: (() => void) | null = null;
  let cancelRenew: (() => void) | null = null;
  /** A look failed: its claim may have committed with the answer lost (held in the database, unknown here). */
  let doubt = false;

  function wakeIn(ms: number): void {
    cancelWake?.();
    cancelWake = running ? deps.clock.after(ms, () => void poll()) : null;
  }

  /** Looks for due timers: one look at a time; a call during one makes another after it. */
  function poll(): Promise<void> {
    if (!running) return Promise.resolve();
    if (looking) {
      lookAgain = true;
      return looking;
    }
    looking = look().finally(() => {
      looking = null;
      if (lookAgain && running) {
        lookAgain = false;
        void poll();
      }
    });
    return looking;
  }

  async function look(): Promise<void> {
    let claimed = 0;
    try {
      if (doubt) {
        const given = await leases.releaseOrphanReplies(deps.nodeId, [...held.keys()]);
        doubt = false;
        if (given > 0) deps.log(`auto replies: gave back ${given} timer claim(s) a failed look had committed unseen`);
      }
      for (;;) {
        const room = concurrency - inFlight.size;
        if (room <= 0 || !running) break; // an answer's end looks again
        const claims = await leases.claimDueReplies(deps.nodeId, deps.clock.now(), room, leaseMs);
        claimed += claims.length;
        for (const c of claims) start(c);
        if (claims.length < room) break;
      }
      const next = await nextReplyDueAt(deps.pool);
      const now = deps.clock.now();
      // A due timer it could not claim is another node's claim in the making: look again at the next poll.
      const untilNext = next === null ? pollMs : next > now ? next - now : claimed > 0 ? 0 : pollMs;
      wakeIn(Math.min(pollMs, untilNext));
    } catch (error) {
      doubt = true;
      deps.log(`auto replies: looking for due timers failed: ${(error as Error).message}`);
      wakeIn(pollMs);
    }
  }

  function start(claim: ClaimedReply): void {
    held.set(claim.conversationId, claim);
    const work = answer(claim).finally(() => {
      held.delete(claim.conversationId);
      inFlight.delete(work);
      fired.release();
      void poll();
    });
    inFlight.add(work);
  }

  /**
   * A claim answered; an answer that failed (the database unreachable, a commit lost) is made
   * again here after a pause (1 s, doubling up to a renewal's interval) while the renewals keep
   * the lease, rather than waiting out the lease for another node. It ends when this node stops
   * or the claim is no longer its own (a renewal found it taken over).
   */
  async function answer(claim: ClaimedReply): Promise<void> {
    for (let failures = 1; ; failures++) {
      try {
        // Made before onFired is looked at: `onFired?.(…, await …)` would skip the answer itself when there is no onFired.
        const result = await fireClaim(deps, claim);
        deps.onFired?.(claim.conversationId, result);
        return;
      } catch (error) {
        deps.log(`auto reply for ${claim.conversationId} failed: ${(error as Error).message}`);
        if (!running || held.get(claim.conversationId) !== claim) return;
        await new Promise<void>((resolve) => {
          const wake = (): void => {
            pauses.delete(wake);
            cancel();
            resolve();
          };
          const cancel = deps.clock.after(Math.min(RETRY_STEP_MS * 2 ** (failures - 1), Math.floor(leaseMs / 3)), wake);
          pauses.add(wake);
        });
        if (!running || held.get(claim.conversationId) !== claim) return;
      }
    }
  }

  async function renew(): Promise<void> {
    const claims = [...held.values()];
    if (claims.length > 0) {
      try {
        const until = await leases.renewReplyLeases(deps.nodeId, claims, deps.clock.now(), leaseMs);
        for (const c of claims) {
          const u = until.get(c.conversationId);
          if (u !== undefined) c.lease.until = u;
          // Lost: another node took it over; this answer is refused at finishReply.
          else held.delete(c.conversationId);
        }
      } catch (error) {
        deps.log(`auto replies: renewing leases failed: ${(error as Error).message}`);
      }
    }
    if (running) cancelRenew = deps.clock.after(Math.max(1, Math.floor(leaseMs / 3)), () => void renew());
  }

  return {
    start(): void {
      if (running) return;
      running = true;
      cancelRenew = deps.clock.after(Math.max(1, Math.floor(leaseMs / 3)), () => void renew());
      void poll();
    },
    /** A reply was scheduled on this node: look for due timers now (and set the wake-up for its due time). */
    notify(): void {
      void poll();
    },
    /** Stops claiming; resolves when the answers in the making have ended. */
    async stop(): Promise<void> {
      running = false;
      cancelWake?.();
      cancelRenew?.();
      cancelWake = cancelRenew = null;
      for (const wake of [...pauses]) wake();
      await looking;
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    /** Answers in the making (claimed, not yet committed or dropped); for `RunningService.quiesce`. */
    firing: (): number => inFlight.size,
    /** Resolves when the next answer in the making ends. */
    fireEnded: (): Promise<void> => fired.wait(),
  };
}

export type PgReplyWorker = ReturnType<typeof createPgReplyWorker>;
