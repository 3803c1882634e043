import { z } from 'zod';
import { DELIVERY_STATES, type DeliveryState } from '../deliveries.ts';
import type { PendingLane } from '../delivery-lanes.ts';
import type { DeliveryOutcome } from './leases/pg-delivery-leases.ts';
import { int8, type Lease } from './leases/lease.ts';
import type { PgQueryable } from './pool.ts';

/**
 * The clients with pending deliveries, by id: a skip over deliveries_lane (one seek per client),
 * as SQLite's PENDING_CLIENTS_SQL.
 */
const PENDING_CLIENTS_SQL = `WITH RECURSIVE c(client_id) AS (
    (SELECT client_id FROM deliveries WHERE state = 'pending' ORDER BY client_id LIMIT 1)
    UNION ALL
    SELECT (SELECT d.client_id FROM deliveries d WHERE d.state = 'pending' AND d.client_id > c.client_id ORDER BY d.client_id LIMIT 1)
    FROM c WHERE c.client_id IS NOT NULL
  )
  SELECT client_id FROM c WHERE client_id IS NOT NULL`;

/**
 * A client's lanes (send_url origins) with pending deliveries, by origin, each with its earliest
 * pending delivery (deliveries_lane order: time, then id), one seek per lane: SQLite's
 * CLIENT_LANES_SQL.
 */
const CLIENT_LANES_SQL = `WITH RECURSIVE l(origin) AS (
    (SELECT origin FROM deliveries WHERE state = 'pending' AND client_id = $1 ORDER BY origin LIMIT 1)
    UNION ALL
    SELECT (SELECT d.origin FROM deliveries d WHERE d.state = 'pending' AND d.client_id = $1 AND d.origin > l.origin ORDER BY d.origin LIMIT 1)
    FROM l WHERE l.origin IS NOT NULL
  )
  SELECT l.origin, e.id, e.next_attempt_at FROM l
  CROSS JOIN LATERAL (SELECT id, next_attempt_at FROM deliveries
                      WHERE state = 'pending' AND client_id = $1 AND origin = l.origin
                      ORDER BY next_attempt_at, id LIMIT 1) e
  WHERE l.origin IS NOT NULL
  ORDER BY l.origin
  LIMIT $2`;

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

/**
 * What the outbox reads of deliveries on PostgreSQL beyond its claims (pg-delivery-leases.ts): the
 * same functions and results as the SQLite store's (deliveries.ts, delivery-lanes.ts), checked on
 * both by delivery-reads.conformance.test.ts, plus the lease-guarded record of a try that went
 * out to a delivery cancelled meanwhile.
 */
export function pgDeliveryQueries(db: PgQueryable) {
  return {
    /** The clients with pending deliveries, due or not, by id. */
    async pendingClients(): Promise<string[]> {
      return (await db.query(PENDING_CLIENTS_SQL)).rows.map((r) => z.string().parse(r['client_id']));
    },
    /** Up to `limit` of a client's lanes with pending deliveries, by origin. */
    async pendingLanes(clientId: string, limit: number): Promise<PendingLane[]> {
      const rows = (await db.query(CLIENT_LANES_SQL, [clientId, limit])).rows;
      return rows.map((r) => ({ origin: z.string().parse(r['origin']), earliestId: int8.parse(r['id']), earliestAt: int8.parse(r['next_attempt_at']) }));
    },
    /** The earliest next_attempt_at of a pending delivery (held or not), or null. */
    async nextDueAt(): Promise<number | null> {
      const at: unknown = (await db.query("SELECT min(next_attempt_at) AS at FROM deliveries WHERE state = 'pending'")).rows[0]?.['at'];
      return at === null || at === undefined ? null : int8.parse(at);
    },
    /** The state as stored now: the outbox's last look before it sends. */
    async stateOf(id: number): Promise<DeliveryState | undefined> {
      const state: unknown = (await db.query('SELECT state FROM deliveries WHERE id = $1', [id])).rows[0]?.['state'];
      return state === undefined ? undefined : z.enum(DELIVERY_STATES).parse(state);
    },
    /**
     * A pending delivery is cancelled (an auto reply whose conversation a human took over). Its
     * lease is left as it is, as every cancel leaves it: a try already out under it is still
     * recorded (recordAfterCancel), and nothing claims a delivery that is not pending.
     */
    async cancel(id: number, reason: string, now: number): Promise<boolean> {
      const r = await db.query(
        "UPDATE deliveries SET state = 'cancelled', last_error = $1, updated_at = $2 WHERE id = $3 AND state = 'pending'",
        [reason, now, id],
      );
      return (r.rowCount ?? 0) > 0;
    },
    /** When completeDelivery refused this claim's attempt: see AFTER_CANCEL_SQL. */
    async recordAfterCancel(id: number, lease: Lease, a: { startedAt: number; durationMs: number; outcome: DeliveryOutcome; now: number }): Promise<AfterCancel> {
      const o = a.outcome;
      const r = await db.query(AFTER_CANCEL_SQL, [id, lease.holder, lease.count, o.kind, o.status, a.startedAt, a.durationMs, a.now, o.kind === 'sent' ? null : o.error]);
      const state: unknown = r.rows[0]?.['state'];
      return state === undefined ? 'lost' : state === 'sent' ? 'sent' : 'counted';
    },
  };
}

export type PgDeliveryQueries = ReturnType<typeof pgDeliveryQueries>;
