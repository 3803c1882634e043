import { assertNever } from '../../../../shared/assert-never.ts';
import { toDeliveryRow, type DeliveryRow } from '../../deliveries.ts';
import { deliveryRowSchema } from '../delivery-rows.ts';
import { checkClaim, int8, leaseArrays, leaseColumns, leaseOf, type Lease, type Queryable } from './lease.ts';

/** A pending delivery this node now holds: send it, then completeDelivery with its lease. */
export interface ClaimedDelivery extends DeliveryRow {
  lease: Lease;
}

/** One send_url origin of one client: the outbox's fair-share lane (src/main/store/delivery-lanes.ts). */
export interface Lane {
  clientId: string;
  origin: string;
}

/** What one attempt came to (retry-policy.ts's verdict) and what it recorded. */
export type DeliveryOutcome =
  | { kind: 'sent'; status: number | null }
  | { kind: 'retry'; at: number; status: number | null; error: string }
  | { kind: 'dead'; status: number | null; error: string };

export interface DeliveryAttempt {
  startedAt: number;
  durationMs: number;
  outcome: DeliveryOutcome;
  now: number;
}

const rowSchema = deliveryRowSchema.extend(leaseColumns);

const toClaimed = (raw: unknown): ClaimedDelivery => {
  const r = rowSchema.parse(raw);
  return { ...toDeliveryRow(r), lease: leaseOf(r) };
};

/**
 * A pending delivery may go when it is due, nobody holds an unexpired lease on it, and no other
 * pending delivery of its conversation is older (SQLite's rule: oldest first, one at a time; an
 * older one in flight is pending until its attempt is recorded) or leased (one that went back to
 * pending, a dead one retried or an undone stop's, must not go beside a newer one in flight).
 * Both read deliveries_pending: one seek per candidate. Rows another claimer has locked are
 * skipped, not waited for, so nodes claiming at once each take different rows.
 */
const eligible = (lane: boolean) => `
  d.state = 'pending' AND d.next_attempt_at <= $1
  AND (d.lease_until IS NULL OR d.lease_until <= $1)
  ${lane ? 'AND d.client_id = $5 AND d.origin = $6' : ''}
  AND NOT EXISTS (SELECT 1 FROM deliveries e
                  WHERE e.conversation_id = d.conversation_id AND e.state = 'pending' AND e.id <> d.id
                    AND (e.id < d.id OR e.lease_until > $1))`;

/** ANY (ARRAY(…)): the picked rows by primary key; a join let the planner hash the whole table (seen on due_replies). */
const claimSql = (lane: boolean) => `
  WITH picked AS (
    SELECT d.id FROM deliveries d
    WHERE ${eligible(lane)}
    ORDER BY d.next_attempt_at, d.id
    LIMIT $2
    FOR UPDATE OF d SKIP LOCKED
  )
  UPDATE deliveries d SET lease_holder = $3, lease_until = $1::bigint + $4::bigint, lease_count = d.lease_count + 1
  WHERE d.id = ANY (ARRAY(SELECT id FROM picked))
  RETURNING d.*`;

export const CLAIM_DELIVERIES_SQL = claimSql(false);
export const CLAIM_LANE_SQL = claimSql(true);

/**
 * The claim's second look, in a snapshot taken after its commit. A claim's rule is checked in the
 * snapshot its statement began with, so two claims committing at once can each miss the other:
 * node A picks d2 while d1 is dead; the console retries d1; node B, not yet seeing A's lease on
 * d2, picks d1. Of two claims of one conversation, the younger one's claimer finds the older one
 * pending here and gives its own back: the older one was pending before the other claimer's
 * snapshot, which was taken before this claim's commit, so before this look. One seek per row
 * claimed (deliveries_pending); nothing is written unless it finds one. Claims run as statements
 * of their own (a pool), as the outbox makes them: a claim inside a transaction kept open is
 * committed only after this look, which then proves nothing.
 */
export const RECHECK_SQL = `
  SELECT d.id FROM deliveries d
  WHERE d.id = ANY ($1::bigint[])
    AND EXISTS (SELECT 1 FROM deliveries e WHERE e.conversation_id = d.conversation_id AND e.state = 'pending' AND e.id < d.id)`;

/**
 * The holder's attempt, in one statement: the delivery's new state and the attempt's row, only
 * while this claim is still the delivery's (holder and claim number) and it is pending. The
 * lease ends with it: a retry is claimable again at its time.
 */
const COMPLETE_SQL = `
  WITH done AS (
    UPDATE deliveries SET state = $4, attempts = attempts + 1, round_attempts = round_attempts + 1,
      next_attempt_at = $5, last_status = $6, last_error = $7, updated_at = $8,
      lease_holder = NULL, lease_until = NULL
    WHERE id = $1 AND lease_holder = $2 AND lease_count = $3 AND state = 'pending'
    RETURNING id, attempts
  ), attempt AS (
    INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status, error, outcome)
    SELECT id, attempts, $9, $10, $6, $7, $11 FROM done
  )
  SELECT count(*)::int AS n FROM done`;

const RENEW_SQL = `
  UPDATE deliveries d SET lease_until = $2::bigint + $3::bigint
  FROM unnest($4::bigint[], $5::int[]) AS h(id, count)
  WHERE d.id = h.id AND d.lease_holder = $1 AND d.lease_count = h.count AND d.state = 'pending'
  RETURNING d.id, d.lease_until`;

const RELEASE_SQL = `
  UPDATE deliveries SET lease_holder = NULL, lease_until = NULL
  WHERE id = $1 AND lease_holder = $2 AND lease_count = $3`;

/** Every lease `holder` has on rows it no longer knows it holds (those not in $2): given back, claimable at once. */
const ORPHANS_SQL = `
  UPDATE deliveries SET lease_holder = NULL, lease_until = NULL
  WHERE lease_holder = $1 AND id <> ALL ($2::bigint[])
  RETURNING id`;

const stateOf = (o: DeliveryOutcome): 'sent' | 'pending' | 'dead' => {
  switch (o.kind) {
    case 'sent':
      return 'sent';
    case 'retry':
      return 'pending';
    case 'dead':
      return 'dead';
    default:
      return assertNever(o, 'delivery outcome');
  }
};

/** The outbox's side of the PostgreSQL work queue: see claimDeliveries. */
export function pgDeliveryLeases(db: Queryable) {
  return {
    /**
     * Up to `limit` due deliveries for `nodeId`, oldest due first (next_attempt_at, then id), each
     * leased until now + leaseMs; at most one per conversation across every node. `lane`
     * narrows the claim to one client's origin (the outbox's fair share picks lanes).
     */
    async claimDeliveries(nodeId: string, now: number, limit: number, leaseMs: number, lane?: Lane): Promise<ClaimedDelivery[]> {
      checkClaim(nodeId, now, limit, leaseMs);
      const r = lane
        ? await db.query(CLAIM_LANE_SQL, [now, limit, nodeId, leaseMs, lane.clientId, lane.origin])
        : await db.query(CLAIM_DELIVERIES_SQL, [now, limit, nodeId, leaseMs]);
      // UPDATE … RETURNING keeps no order.
      const claimed = r.rows.map(toClaimed).sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.id - b.id);
      if (claimed.length === 0) return claimed;
      let ids: Set<number>;
      try {
        const clash = await db.query(RECHECK_SQL, [claimed.map((d) => d.id)]);
        if (clash.rows.length === 0) return claimed;
        ids = new Set(clash.rows.map((row) => int8.parse(row['id'])));
      } catch (error) {
        // The claim committed and the look after it failed: give every row back rather than leave
        // them leased to a node that does not know it holds them (late by a whole lease). Best
        // effort: when the database is gone, the leases run out as for a node that died.
        await Promise.allSettled(claimed.map((d) => db.query(RELEASE_SQL, [d.id, d.lease.holder, d.lease.count])));
        throw error;
      }
      const given = claimed.filter((d) => ids.has(d.id));
      for (const d of given) await db.query(RELEASE_SQL, [d.id, d.lease.holder, d.lease.count]);
      return claimed.filter((d) => !ids.has(d.id));
    },
    /**
     * Extends the leases this node still holds to now + leaseMs, one statement for all; returns
     * the ids it still holds (a missing one was claimed by another node after its lease ran
     * out, or is no longer pending: stop working on it).
     */
    async renewLeases(nodeId: string, held: ReadonlyArray<{ id: number; lease: Lease }>, now: number, leaseMs: number): Promise<Map<number, number>> {
      if (held.length === 0) return new Map();
      const { keys, counts } = leaseArrays(held.map((h) => ({ key: h.id, lease: h.lease })), nodeId);
      const r = await db.query(RENEW_SQL, [nodeId, now, leaseMs, keys, counts]);
      return new Map(r.rows.map((row) => [int8.parse(row['id']), int8.parse(row['lease_until'])]));
    },
    /**
     * Records the holder's attempt (sent, retry at a time, dead) and ends the lease. False when
     * the lease is no longer this claim's, or the delivery is no longer pending (cancelled): the
     * new holder's or the operator's record stands and nothing is written.
     */
    async completeDelivery(id: number, lease: Lease, attempt: DeliveryAttempt): Promise<boolean> {
      const o = attempt.outcome;
      const r = await db.query<{ n: number }>(COMPLETE_SQL, [
        id,
        lease.holder,
        lease.count,
        stateOf(o),
        o.kind === 'retry' ? o.at : attempt.now,
        o.status,
        o.kind === 'sent' ? null : o.error,
        attempt.now,
        attempt.startedAt,
        attempt.durationMs,
        o.kind,
      ]);
      return r.rows[0]!.n === 1;
    },
    /** Gives a claimed delivery back untried (the node is stopping): claimable again at once. */
    async releaseDelivery(id: number, lease: Lease): Promise<boolean> {
      return ((await db.query(RELEASE_SQL, [id, lease.holder, lease.count])).rowCount ?? 0) > 0;
    },
    /**
     * After a claim whose outcome this node never learned (its connection dropped around the
     * COMMIT, which may have happened): the rows leased to `nodeId` that it does not hold in memory
     * are given back, so they wait for no lease to run out. Node ids are unique per process, so no
     * other node's claim is touched. Returns how many were given back.
     */
    async releaseOrphanDeliveries(nodeId: string, held: readonly number[]): Promise<number> {
      return (await db.query(ORPHANS_SQL, [nodeId, held])).rowCount ?? 0;
    },
  };
}

export type PgDeliveryLeases = ReturnType<typeof pgDeliveryLeases>;
