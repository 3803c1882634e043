import { z } from 'zod';
import type { DeliveryRow } from '../deliveries.ts';
import type { PendingLane } from '../delivery-lanes.ts';
import { toPgDeliveryRow } from './delivery-rows.ts';
import { int8, type PgQueryable } from './pool.ts';

/** Only the oldest pending delivery of a conversation may go (deliveries_pending: one seek per candidate). */
const OLDEST_OF_CONVERSATION = `NOT EXISTS (SELECT 1 FROM deliveries e
                    WHERE e.conversation_id = d.conversation_id AND e.state = 'pending' AND e.id < d.id)`;

/**
 * Due deliveries of every client, oldest first, in order per conversation: SQLite's DUE_SQL. As
 * there, a delivery leased by a node (its try in flight) is pending and listed: this is what is
 * due, not what may be claimed (pg-delivery-leases.ts decides that).
 */
const DUE_SQL = `SELECT d.* FROM deliveries d
  WHERE d.state = 'pending' AND d.next_attempt_at <= $1 AND ${OLDEST_OF_CONVERSATION}
  ORDER BY d.next_attempt_at, d.id LIMIT $2`;

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

/** Due deliveries of one lane, in order, other than those in $4: SQLite's LANE_DUE_SQL. */
const LANE_DUE_SQL = `SELECT d.* FROM deliveries d
  WHERE d.state = 'pending' AND d.client_id = $1 AND d.origin = $2 AND d.next_attempt_at <= $3
    AND NOT (d.id = ANY ($4::bigint[])) AND ${OLDEST_OF_CONVERSATION}
  ORDER BY d.next_attempt_at, d.id LIMIT $5`;

/** What is due, as a whole and lane by lane (delivery-lanes.ts on SQLite). */
export function pgDeliveryLaneQueries(db: PgQueryable) {
  return {
    /** Due deliveries of every client, oldest first, up to `limit`. */
    async due(now: number, limit: number): Promise<DeliveryRow[]> {
      return (await db.query(DUE_SQL, [now, limit])).rows.map(toPgDeliveryRow);
    },
    /** The clients with pending deliveries, due or not, by id. */
    async pendingClients(): Promise<string[]> {
      return (await db.query(PENDING_CLIENTS_SQL)).rows.map((r) => z.string().parse(r['client_id']));
    },
    /** Up to `limit` of a client's lanes with pending deliveries, by origin. */
    async pendingLanes(clientId: string, limit: number): Promise<PendingLane[]> {
      const rows = (await db.query(CLIENT_LANES_SQL, [clientId, limit])).rows;
      return rows.map((r) => ({ origin: z.string().parse(r['origin']), earliestId: int8.parse(r['id']), earliestAt: int8.parse(r['next_attempt_at']) }));
    },
    /** A lane's due deliveries in order, up to `limit`, other than those in `except`. */
    async dueInLane(clientId: string, origin: string, now: number, limit: number, except: readonly number[] = []): Promise<DeliveryRow[]> {
      return (await db.query(LANE_DUE_SQL, [clientId, origin, now, [...except], limit])).rows.map(toPgDeliveryRow);
    },
  };
}
