import { z } from 'zod';
import { DELIVERY_STATES, type AttemptRow, type DeliveryRow, type DeliveryState, type ProblemRow, type ProblemState } from '../deliveries.ts';
import { pgLimit, toPgAttemptRow, toPgDeliveryRow } from './delivery-rows.ts';
import { int8, type PgQueryable } from './pool.ts';

/** Each problem state by its own partial index (deliveries_retrying, _dead, _cancelled), newest change first. */
const problemSql = (where: string): string => `SELECT d.* FROM deliveries d
  WHERE ${where} AND ($1::text IS NULL OR d.client_id = $1) ORDER BY d.updated_at DESC, d.id DESC LIMIT $2`;

const PROBLEM_SQL: Record<ProblemState, string> = {
  retrying: problemSql("d.state = 'pending' AND d.attempts > 0"),
  dead: problemSql("d.state = 'dead'"),
  cancelled: problemSql("d.state = 'cancelled'"),
};

const state = z.enum(DELIVERY_STATES);

/** The deliveries as the console and the CLI read them: the SQLite store's reads (deliveries.ts), the same results. */
export function pgDeliveryReads(db: PgQueryable) {
  const rows = async (text: string, values: unknown[]): Promise<DeliveryRow[]> => (await db.query(text, values)).rows.map(toPgDeliveryRow);
  return {
    /** The earliest next_attempt_at of a pending delivery (held or not), or null. */
    async nextDueAt(): Promise<number | null> {
      const at: unknown = (await db.query("SELECT min(next_attempt_at) AS at FROM deliveries WHERE state = 'pending'")).rows[0]?.['at'];
      return at === null || at === undefined ? null : int8.parse(at);
    },
    async get(id: number): Promise<DeliveryRow | undefined> {
      return (await rows('SELECT * FROM deliveries WHERE id = $1', [id]))[0];
    },
    async list(s: DeliveryState | undefined, limit: number): Promise<DeliveryRow[]> {
      return s
        ? rows('SELECT * FROM deliveries WHERE state = $1 ORDER BY id DESC LIMIT $2', [s, pgLimit(limit)])
        : rows('SELECT * FROM deliveries ORDER BY id DESC LIMIT $1', [pgLimit(limit)]);
    },
    async attempts(deliveryId: number): Promise<AttemptRow[]> {
      const r = await db.query('SELECT attempt, started_at, duration_ms, status, error, outcome FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt', [deliveryId]);
      return r.rows.map(toPgAttemptRow);
    },
    /** The last recorded try's answer, or null before the first. */
    async lastAttempt(deliveryId: number): Promise<{ status: number | null; error: string | null } | null> {
      const r = (await db.query('SELECT status, error FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt DESC LIMIT 1', [deliveryId])).rows[0];
      return r ? { status: z.number().int().nullable().parse(r['status']), error: z.string().nullable().parse(r['error']) } : null;
    },
    /** The state as stored now: the outbox's last look before it sends. */
    async stateOf(id: number): Promise<DeliveryState | undefined> {
      const s: unknown = (await db.query('SELECT state FROM deliveries WHERE id = $1', [id])).rows[0]?.['state'];
      return s === undefined ? undefined : state.parse(s);
    },
    /** These deliveries, by id (those that exist). */
    async byIds(ids: readonly number[]): Promise<DeliveryRow[]> {
      return rows('SELECT * FROM deliveries WHERE id = ANY ($1::bigint[]) ORDER BY id', [[...ids]]);
    },
    /**
     * Retrying, dead and cancelled deliveries, newest change first (SQLite's problems: one query
     * per state, merged here in the same order).
     */
    async problems(states: readonly ProblemState[], clientId: string | null, limit: number): Promise<ProblemRow[]> {
      const out: ProblemRow[] = [];
      for (const p of new Set(states)) {
        for (const d of await rows(PROBLEM_SQL[p], [clientId, pgLimit(limit)])) out.push({ ...d, problem: p });
      }
      return out.sort((a, b) => b.updatedAt - a.updatedAt || b.id - a.id).slice(0, limit);
    },
    /** Ids of dead deliveries, of one client or all, oldest first. */
    async deadIds(clientId: string | null, limit: number): Promise<number[]> {
      const r = await db.query("SELECT id FROM deliveries WHERE state = 'dead' AND ($1::text IS NULL OR client_id = $1) ORDER BY id LIMIT $2", [clientId, pgLimit(limit)]);
      return r.rows.map((row) => int8.parse(row['id']));
    },
    async countByState(): Promise<Record<DeliveryState, number>> {
      const out: Record<DeliveryState, number> = { pending: 0, sent: 0, dead: 0, cancelled: 0 };
      for (const r of (await db.query('SELECT state, count(*) AS n FROM deliveries GROUP BY state')).rows) out[state.parse(r['state'])] = int8.parse(r['n']);
      return out;
    },
  };
}
