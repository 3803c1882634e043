import type { Db } from './db.ts';
import type { DeliveryRow } from './deliveries.ts';

/**
 * The clients with pending deliveries: one seek each (a skip over deliveries_lane), however many
 * deliveries each has pending.
 */
export const PENDING_CLIENTS_SQL = `WITH RECURSIVE c(client_id) AS (
    SELECT (SELECT client_id FROM deliveries INDEXED BY deliveries_lane WHERE state = 'pending' ORDER BY client_id LIMIT 1)
    UNION ALL
    SELECT (SELECT d.client_id FROM deliveries d INDEXED BY deliveries_lane
            WHERE d.state = 'pending' AND d.client_id > c.client_id ORDER BY d.client_id LIMIT 1)
    FROM c WHERE c.client_id IS NOT NULL
  )
  SELECT client_id FROM c WHERE client_id IS NOT NULL`;

/**
 * A client's lanes (one per send_url origin) with pending deliveries, each with its earliest
 * pending delivery (the first in the lane's index order: no due one of the lane comes before it),
 * one seek per lane, at most ?2 lanes. CROSS JOIN keeps the lanes outer: after ANALYZE the planner
 * otherwise read every delivery and looked each up among the lanes.
 */
export const CLIENT_LANES_SQL = `WITH RECURSIVE l(id) AS (
    SELECT (SELECT id FROM deliveries INDEXED BY deliveries_lane WHERE state = 'pending' AND client_id = ?1 ORDER BY origin, next_attempt_at LIMIT 1)
    UNION ALL
    SELECT (SELECT e.id FROM deliveries e INDEXED BY deliveries_lane
            WHERE e.state = 'pending' AND e.client_id = ?1 AND e.origin > d.origin ORDER BY e.origin, e.next_attempt_at LIMIT 1)
    FROM l CROSS JOIN deliveries d ON d.id = l.id
    LIMIT ?2
  )
  SELECT d.origin, d.id, d.next_attempt_at FROM l CROSS JOIN deliveries d ON d.id = l.id`;

/**
 * Due deliveries of one lane (client and origin), oldest first and in order per conversation,
 * leaving out those the outbox already holds (a JSON array of ids): they are pending until their
 * attempt is recorded, and the oldest of the lane, so re-reading them would cost more the busier
 * the lane is.
 */
export const LANE_DUE_SQL = `SELECT d.* FROM deliveries d INDEXED BY deliveries_lane
  WHERE d.state = 'pending' AND d.client_id = ?1 AND d.origin = ?2 AND d.next_attempt_at <= ?3
    AND d.id NOT IN (SELECT value FROM json_each(?4))
    AND NOT EXISTS (SELECT 1 FROM deliveries e INDEXED BY deliveries_pending
                    WHERE e.conversation_id = d.conversation_id AND e.state = 'pending' AND e.id < d.id)
  ORDER BY d.next_attempt_at, d.id LIMIT ?5`;

/**
 * The receiver a send_url reaches, as the outbox shares its slots: scheme://host:port, the
 * default port spelled out, so `https://h/` and `https://h:443/x` are one origin. A send_url that
 * is not a URL (its delivery dies at its first try) is its own.
 */
export function originOf(sendUrl: string): string {
  try {
    const u = new URL(sendUrl);
    const port = u.port || (u.protocol === 'https:' ? '443' : u.protocol === 'http:' ? '80' : '');
    return `${u.protocol}//${u.hostname}:${port}`;
  } catch {
    return sendUrl;
  }
}

/** A lane with pending deliveries and its earliest one, which may be held or not yet due. */
export interface PendingLane {
  origin: string;
  earliestId: number;
  earliestAt: number;
}

/** The outbox's reads by lane; `rows` turns the lane's raw rows into DeliveryRows (deliveries.ts). */
export function laneQueries(db: Db, rows: (raw: unknown[]) => DeliveryRow[]) {
  const pendingClients = db.prepare(PENDING_CLIENTS_SQL);
  const clientLanes = db.prepare(CLIENT_LANES_SQL);
  const laneDue = db.prepare(LANE_DUE_SQL);
  return {
    /** The clients with pending deliveries, due or not, by id. */
    pendingClients(): string[] {
      return (pendingClients.all() as Array<{ client_id: string }>).map((r) => r.client_id);
    },
    /** Up to `limit` of a client's lanes with pending deliveries, by origin. */
    pendingLanes(clientId: string, limit: number): PendingLane[] {
      return (clientLanes.all(clientId, limit) as Array<{ origin: string; id: number; next_attempt_at: number }>).map((r) => ({
        origin: r.origin,
        earliestId: r.id,
        earliestAt: r.next_attempt_at,
      }));
    },
    /** A lane's due deliveries in order, up to `limit`, other than those in `except`. */
    dueInLane(clientId: string, origin: string, now: number, limit: number, except: readonly number[] = []): DeliveryRow[] {
      return rows(laneDue.all(clientId, origin, now, JSON.stringify(except), limit));
    },
  };
}
