import type { StoreContract } from '../store/contract.ts';

/**
 * Past the wait itself, lines older than this are history, not a wait: a long outage must not
 * raise every conversation a customer once wrote in and staff answered elsewhere.
 */
export const STAFF_WAIT_HISTORY_MS = 24 * 60 * 60_000;

/** The oldest time a waiting line may have: within the history window, and not before the watch existed. */
export function staffWaitNotBefore(now: number, waitMs: number, watchingSince: number): number {
  return Math.max(now - waitMs - STAFF_WAIT_HISTORY_MS, watchingSince);
}

/** Has the customer of this conversation waited `waitMs` for staff who hold it in the IM? */
export interface StaffWaitCommand {
  kind: 'staff_wait';
  conversationId: string;
  waitMs: number;
  now: number;
  /** When this store first ran the watch: lines from before it were never waits (see staff-wait.ts). */
  watchingSince: number;
}

/** `alert`: it entered Needs you now. `nextAt`: a customer still waits, and is due then. */
export interface StaffWaitResult {
  kind: 'staff_wait';
  alert: boolean;
  nextAt: number | null;
}

/**
 * Runs in the writer, so the look and the flag are one transaction: a staff line or an operator
 * reply committed before it counts, one after it clears the flag as any answer does (on
 * PostgreSQL the conversation's row lock, taken first by pg-writer.ts, keeps that true, and two
 * nodes checking at once flag it once). The
 * conversation enters Needs you as having waited since the customer's first unanswered line. A
 * conversation the console resumed is the bot's again, and an operator looked at it: no wait.
 */
export async function checkStaffWait(store: StoreContract, c: StaffWaitCommand): Promise<StaffWaitResult> {
  const none: StaffWaitResult = { kind: 'staff_wait', alert: false, nextAt: null };
  const conv = await store.conversations.byId(c.conversationId);
  if (!conv || conv.needsHuman || conv.autoReply === 'active') return none;
  const first = await store.staffWait.firstUnanswered(c.conversationId, staffWaitNotBefore(c.now, c.waitMs, c.watchingSince));
  if (!first) return none;
  const dueAt = first.receivedAt + c.waitMs;
  if (dueAt > c.now) return { ...none, nextAt: dueAt };
  return { ...none, alert: await store.conversations.flagNeedsHuman(c.conversationId, first.receivedAt, 'customer_waiting') };
}
