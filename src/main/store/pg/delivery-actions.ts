import type { AttemptRecord } from '../deliveries.ts';
import type { DeliveryOutcome } from './leases/pg-delivery-leases.ts';
import type { Lease } from './leases/lease.ts';
import type { PgQueryable } from './pool.ts';

/**
 * The changes of a delivery's state other than a claim and its record (pg-delivery-leases.ts):
 * the console's Retry, Retry now and Cancel, a stop's cancel and its Undo, an operator's answer
 * making auto replies due. SQLite's statements (deliveries.ts), each one conditional UPDATE, so
 * that two nodes acting on one delivery at once change it once (the second finds it in another
 * state and reports false / 0, as SQLite's single writer would).
 *
 * Leases: none of these statements writes the lease columns. A delivery claimed by a node (its
 * try may be on the wire) keeps its lease whatever an operator does to it, so:
 * - no other node claims it while the lease lasts, whatever its state (the claim's rule);
 * - the holder's record still lands: completeDelivery when the delivery is pending again (a
 *   Cancel undone by an Undo of a stop), recordAfterCancel when it is cancelled (the try counted,
 *   or the delivery sent if the receiver accepted it), and nothing at all when the claim is no
 *   longer the row's.
 * Clearing the lease with the change would let another node send the delivery while the holder's
 * try is still out: twice, where SQLite's outbox (one process) sends it once. Moving a leased
 * delivery back to pending (restoreCancelled) therefore leaves it with its holder; retryNow of one
 * being tried changes only its updated_at (it is due already), as on SQLite.
 */
const CANCEL_SQL = "UPDATE deliveries SET state = 'cancelled', last_error = $1, updated_at = $2 WHERE id = $3 AND state = 'pending'";

const RESTORE_SQL = `UPDATE deliveries SET state = 'pending', next_attempt_at = $1, updated_at = $1
  WHERE conversation_id = $2 AND state = 'cancelled' AND kind = 'auto' AND last_error = $3 AND updated_at = $4`;

const RETRY_SQL = "UPDATE deliveries SET state = 'pending', round_attempts = 0, next_attempt_at = $1, updated_at = $1 WHERE id = $2 AND state = 'dead'";

// An early try is an extra one: if it fails, the wait after it is the step it was waiting out (deliveries.ts).
const RETRY_NOW_SQL = `UPDATE deliveries SET next_attempt_at = least(next_attempt_at, $1), updated_at = $1,
    round_attempts = CASE WHEN next_attempt_at > $1 AND round_attempts > 0 THEN round_attempts - 1 ELSE round_attempts END
  WHERE id = $2 AND state = 'pending' AND attempts > 0`;

const CANCEL_FAILED_SQL = `UPDATE deliveries SET state = 'cancelled', last_error = $1, updated_at = $2
  WHERE id = $3 AND ((state = 'pending' AND attempts > 0) OR state = 'dead')`;

const AUTO_DUE_NOW_SQL = "UPDATE deliveries SET next_attempt_at = $1 WHERE conversation_id = $2 AND state = 'pending' AND kind = 'auto' AND next_attempt_at > $1";

/**
 * A try recorded without a claim (the contract's recordAttempt, as SQLite's outbox records): only
 * while no node holds an unexpired lease on the delivery, whose holder's own record is the one
 * that stands; a lease run out is ended with the record.
 */
const RECORD_SQL = `UPDATE deliveries SET state = $1, attempts = attempts + 1, round_attempts = round_attempts + 1, next_attempt_at = $2,
    last_status = $3, last_error = $4, updated_at = $5, lease_holder = NULL, lease_until = NULL
  WHERE id = $6 AND state = 'pending' AND (lease_until IS NULL OR lease_until <= $5)`;
const SENT_AFTER_CANCEL_SQL = "UPDATE deliveries SET state = 'sent', attempts = attempts + 1, last_status = $1, last_error = NULL, updated_at = $2 WHERE id = $3 AND state = 'cancelled'";
const COUNT_CANCELLED_SQL = "UPDATE deliveries SET attempts = attempts + 1 WHERE id = $1 AND state = 'cancelled'";
const INSERT_ATTEMPT_SQL = 'INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status, error, outcome) VALUES ($1, $2, $3, $4, $5, $6, $7)';

/**
 * A try that went out under this claim to a delivery cancelled meanwhile (the console's Cancel, a
 * stop of auto-reply): as SQLite's recordAttempt, the receiver may have it, so the attempt is
 * recorded and counted; if the receiver accepted it the customer has the reply, so it is sent.
 * Only while the claim is still the row's: a claim taken over by another node records nothing.
 */
const AFTER_CANCEL_SQL = `
  WITH done AS (
    UPDATE deliveries SET attempts = attempts + 1,
      state = CASE WHEN $4 = 'sent' THEN 'sent' ELSE state END,
      last_status = CASE WHEN $4 = 'sent' THEN $5 ELSE last_status END,
      last_error = CASE WHEN $4 = 'sent' THEN NULL ELSE last_error END,
      updated_at = CASE WHEN $4 = 'sent' THEN $8 ELSE updated_at END,
      lease_holder = NULL, lease_until = NULL
    WHERE id = $1 AND lease_holder = $2 AND lease_count = $3 AND state = 'cancelled'
    RETURNING id, attempts, state
  ), attempt AS (
    INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status, error, outcome)
    SELECT id, attempts, $6, $7, $5, $9, $4 FROM done
  )
  SELECT state FROM done`;

/**
 * - sent: the try was accepted after a cancel; the delivery is sent after all.
 * - counted: the try is recorded against the cancelled delivery, which stays cancelled.
 * - lost: this claim is no longer the delivery's (another node claimed it after the lease ran
 *   out, or completed it): nothing was written, that node's record stands.
 */
export type AfterCancel = 'sent' | 'counted' | 'lost';

export function pgDeliveryActions(db: PgQueryable) {
  const changed = async (text: string, values: unknown[]): Promise<number> => (await db.query(text, values)).rowCount ?? 0;
  return {
    /** A pending delivery is cancelled (an auto reply whose conversation a human took over). */
    cancel: async (id: number, reason: string, now: number): Promise<boolean> => (await changed(CANCEL_SQL, [reason, now, id])) > 0,
    /** Undo of a stop: the auto replies that stop cancelled (its reason, its time) are due again now. */
    restoreCancelled: (conversationId: string, reason: string, cancelledAt: number, now: number): Promise<number> =>
      changed(RESTORE_SQL, [now, conversationId, reason, cancelledAt]),
    /** A dead delivery goes back to pending with a fresh retry schedule. */
    retry: async (id: number, now: number): Promise<boolean> => (await changed(RETRY_SQL, [now, id])) > 0,
    /** A delivery waiting for its next retry is tried now (the operator asked); its schedule carries on. */
    retryNow: async (id: number, now: number): Promise<boolean> => (await changed(RETRY_NOW_SQL, [now, id])) > 0,
    /** The console's Cancel of a retrying or dead delivery; `reason` names who cancelled it. */
    cancelFailed: async (id: number, reason: string, now: number): Promise<boolean> => (await changed(CANCEL_FAILED_SQL, [reason, now, id])) > 0,
    /** Auto replies of a conversation waiting for a retry are due now, to be re-checked (and cancelled) at once. */
    autoDueNow: (conversationId: string, now: number): Promise<number> => changed(AUTO_DUE_NOW_SQL, [now, conversationId]),
    /**
     * Records an attempt and its verdict, as SQLite's: a delivery cancelled meanwhile stays
     * cancelled, its attempt recorded, unless the receiver accepted it: then it is sent. Each step
     * is one conditional statement, so a change by another node between them is seen, not undone.
     */
    async recordAttempt(a: AttemptRecord): Promise<boolean> {
      const recorded = (await changed(RECORD_SQL, [a.state, a.nextAttemptAt, a.status, a.error, a.now, a.deliveryId])) > 0;
      const delivered = !recorded && a.outcome === 'sent' && (await changed(SENT_AFTER_CANCEL_SQL, [a.status, a.now, a.deliveryId])) > 0;
      if (recorded || delivered || (await changed(COUNT_CANCELLED_SQL, [a.deliveryId])) > 0) {
        await db.query(INSERT_ATTEMPT_SQL, [a.deliveryId, a.attempt, a.startedAt, a.durationMs, a.status, a.error, a.outcome]);
      }
      return recorded || delivered;
    },
    /** When completeDelivery refused this claim's attempt: see AFTER_CANCEL_SQL. */
    async recordAfterCancel(id: number, lease: Lease, a: { startedAt: number; durationMs: number; outcome: DeliveryOutcome; now: number }): Promise<AfterCancel> {
      const o = a.outcome;
      const r = await db.query(AFTER_CANCEL_SQL, [id, lease.holder, lease.count, o.kind, o.status, a.startedAt, a.durationMs, a.now, o.kind === 'sent' ? null : o.error]);
      const state: unknown = r.rows[0]?.['state'];
      return state === undefined ? 'lost' : state === 'sent' ? 'sent' : 'counted';
    },
    /**
     * A node holds an unexpired lease on the delivery: a try of it may be on the wire (what the
     * console's Cancel tells as tryOnTheWire; SQLite's outbox answers it from its own memory).
     */
    async leased(id: number, now: number): Promise<boolean> {
      return (await changed('SELECT 1 FROM deliveries WHERE id = $1 AND lease_until > $2', [id, now])) > 0;
    },
  };
}
