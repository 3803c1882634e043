import type { Clock } from '../../shared/clock.ts';
import type { MessageWriter } from './message-service.ts';
import type { Unanswered } from '../store/staff-wait.ts';
import type { StoreContract } from '../store/contract.ts';
import { staffWaitNotBefore } from './staff-wait-commands.ts';

/** The settings key holding when this store first ran the watch. */
export const STAFF_WAIT_SINCE_SETTING = 'staff_wait_since';

/** A check the writer could not run is tried again this much later. */
const RETRY_MS = 60_000;

export interface StaffWaitDeps {
  writer: MessageWriter;
  clock: Clock;
  /** How long a customer may wait on staff who hold the conversation in the IM; 0: never alert. */
  waitMs: number;
  /**
   * When this store first ran the watch. Before it, a customer who had the last word in a chat
   * staff handled in the IM was nobody's concern: the first start after the upgrade must not put
   * every such conversation of the last day in Needs you.
   */
  watchingSince: number;
  /** Read at start (and by each sweep): conversations a customer may be waiting in (store.staffWait.waiting). */
  waiting: (since: number) => Promise<Array<Unanswered & { conversationId: string }>> | Array<Unanswered & { conversationId: string }>;
  /** The conversation entered Needs you (committed): the console's alert. */
  onAlert: (conversationId: string) => void;
  log: (line: string) => void;
}

/**
 * Staff who stop the bot from the IM (stop_auto_reply, or a staff line that pauses it) answer
 * there, so a customer's message then raises no console alert at once, as it does when the console
 * holds the bot off. If nobody answers it within `waitMs` (no staff line, no reply, no Resolve),
 * the conversation enters Needs you as waiting since that message, and the console alerts once.
 *
 * One timer per conversation, due at its first unanswered line's wait; when it fires the writer
 * looks again and either flags the conversation or names the next line to wait for. Timers live
 * in memory: at start, the held conversations written in lately are read once and their timers
 * set again, so a restart neither loses a wait nor starts it over. On PostgreSQL the timers are
 * the node's that stored the customer's line; `sweep` reads the same list again for whichever
 * node runs it (pg-staff-wait-sweep.ts), so a wait whose node died is still checked.
 */
export function createStaffWaitWatch(deps: StaffWaitDeps) {
  const timers = new Map<string, { at: number; cancel: () => void }>();
  let stopped = false;

  /** The writer's check of one conversation, as of `now`; announces the alert it raised. */
  async function checkNow(conversationId: string, now: number): Promise<{ alert: boolean; nextAt: number | null } | null> {
    const result = await deps.writer.submit({ kind: 'staff_wait', conversationId, waitMs: deps.waitMs, now, watchingSince: deps.watchingSince });
    if (result?.kind !== 'staff_wait') return null;
    if (result.alert) deps.onAlert(conversationId);
    return result;
  }

  function check(conversationId: string): void {
    timers.delete(conversationId);
    const now = deps.clock.now();
    checkNow(conversationId, now)
      .then((result) => {
        if (result && result.nextAt !== null) arm(conversationId, result.nextAt);
      })
      .catch((error: unknown) => {
        deps.log(`staff wait check of ${conversationId} failed: ${(error as Error).message}; trying again in a minute`);
        arm(conversationId, now + RETRY_MS);
      });
  }

  /** Keeps the earlier of two due times: a check may name a line older than the one just written. */
  function arm(conversationId: string, at: number): void {
    if (stopped || deps.waitMs <= 0) return;
    const existing = timers.get(conversationId);
    if (existing && existing.at <= at) return;
    existing?.cancel();
    timers.set(conversationId, { at, cancel: deps.clock.after(at - deps.clock.now(), () => check(conversationId)) });
  }

  return {
    /** Reads what a restart left waiting; call once, after the writer is up. */
    async start(): Promise<void> {
      if (deps.waitMs <= 0) return;
      for (const w of await deps.waiting(staffWaitNotBefore(deps.clock.now(), deps.waitMs, deps.watchingSince))) arm(w.conversationId, w.receivedAt + deps.waitMs);
    },
    /**
     * Checks now each wait that has fallen due, whoever's timer it was, one after the other; sets
     * no timer (the next sweep looks again). A conversation already in Needs you is not read; one
     * whose own node checks it at the same moment raises one alert (the check's conditional flag,
     * after the conversation's row lock on PostgreSQL). A check that fails is logged and left to
     * the next sweep. Returns the alerts it raised.
     */
    async sweep(stopping: () => boolean = () => false): Promise<number> {
      if (stopped || deps.waitMs <= 0) return 0;
      const now = deps.clock.now();
      let alerts = 0;
      for (const w of await deps.waiting(staffWaitNotBefore(now, deps.waitMs, deps.watchingSince))) {
        if (stopped || stopping()) break;
        if (w.receivedAt + deps.waitMs > now) continue;
        try {
          if ((await checkNow(w.conversationId, now))?.alert) alerts++;
        } catch (error) {
          deps.log(`staff wait sweep: the check of ${w.conversationId} failed: ${(error as Error).message}; the next sweep tries again`);
        }
      }
      return alerts;
    },
    /** A customer just wrote while staff in the IM hold the conversation (or staff just stopped the bot on a line). */
    customerWrote(conversationId: string): void {
      arm(conversationId, deps.clock.now() + deps.waitMs);
    },
    /** Conversations being watched. */
    watching: (): number => timers.size,
    stop(): void {
      stopped = true;
      for (const t of timers.values()) t.cancel();
      timers.clear();
    },
  };
}

/**
 * When the watch started running on this store, recorded at that start. Switched off, it forgets:
 * switched on again later, the lines of the time it was off were nobody's wait either.
 */
export async function staffWatchSince(settings: Pick<StoreContract['settings'], 'get' | 'put' | 'delete'>, now: number, on: boolean): Promise<number> {
  if (!on) {
    await settings.delete(STAFF_WAIT_SINCE_SETTING);
    return now;
  }
  const stored = Number(await settings.get(STAFF_WAIT_SINCE_SETTING));
  if (Number.isFinite(stored) && stored > 0) return stored;
  await settings.put(STAFF_WAIT_SINCE_SETTING, String(now));
  return now;
}
