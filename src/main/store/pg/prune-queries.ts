import { STATS_RETENTION_MINUTES } from '../migrations/012-stats-rollup.ts';
import type { PruneLimits } from '../request-log.ts';
import { int8, type PgQueryable } from './pool.ts';

const changed = async (db: PgQueryable, text: string, values: unknown[]): Promise<number> => (await db.query(text, values)).rowCount ?? 0;

/**
 * The retention passes on PostgreSQL, with SQLite's rules (store/request-log.ts prune,
 * idempotency.ts prune, stats.ts statsRollupPrune): the request log by age, then each kind
 * (verified, unverified) down to its limit, oldest first; the dashboard's minutes a week behind
 * the newest (in the old table and its shards, migration 7); idempotency records by age. Each
 * call deletes at most `batch` rows per rule, in its own statement, so no delete holds the rows
 * ingest writes for long.
 */
export function pgPruneQueries(db: PgQueryable) {
  async function sizes(): Promise<{ verified: number; unverified: number }> {
    const rows = (await db.query('SELECT verified, n FROM request_log_rows_all')).rows as Array<{ verified: number; n: unknown }>;
    const of = (kind: number): number => int8.parse(rows.find((r) => r.verified === kind)?.n ?? 0);
    return { verified: of(1), unverified: of(0) };
  }
  async function statsCutoff(): Promise<number | null> {
    const r = (await db.query(
      `SELECT least((SELECT min(minute) FROM stats_minutes), (SELECT min(minute) FROM stats_minute_shards)) AS first,
              greatest((SELECT max(minute) FROM stats_minutes), (SELECT max(minute) FROM stats_minute_shards)) AS last`,
    )).rows[0] as { first: unknown; last: unknown };
    if (r.first === null || r.last === null) return null;
    const first = int8.parse(r.first);
    const last = int8.parse(r.last);
    return first < last - STATS_RETENTION_MINUTES ? last - STATS_RETENTION_MINUTES : null;
  }
  return {
    /** Whether requestLog() has anything to do. */
    async requestLogNeedsPrune(limits: Omit<PruneLimits, 'batch'>): Promise<boolean> {
      if ((await statsCutoff()) !== null) return true;
      const oldest = (await db.query('SELECT min(at) AS oldest FROM request_log')).rows[0] as { oldest: unknown };
      if (oldest.oldest === null) return false;
      const n = await sizes();
      return int8.parse(oldest.oldest) < limits.before || n.verified > limits.maxRows || n.unverified > limits.maxUnverifiedRows;
    },
    /** One batch of the request log's and the minutes' retention; returns the rows deleted (0: done). */
    async requestLog(limits: PruneLimits): Promise<number> {
      let n = await changed(db, 'DELETE FROM request_log WHERE id IN (SELECT id FROM request_log WHERE at < $1 ORDER BY id LIMIT $2)', [limits.before, limits.batch]);
      const size = await sizes();
      const excess = async (kind: 0 | 1, over: number): Promise<number> =>
        over > 0 ? changed(db, 'DELETE FROM request_log WHERE id IN (SELECT id FROM request_log WHERE verified = $1 ORDER BY id LIMIT $2)', [kind, Math.min(over, limits.batch)]) : 0;
      n += await excess(1, size.verified - limits.maxRows);
      n += await excess(0, size.unverified - limits.maxUnverifiedRows);
      const cutoff = await statsCutoff();
      if (cutoff !== null) {
        n += await changed(db, 'DELETE FROM stats_minutes WHERE (minute, metric) IN (SELECT minute, metric FROM stats_minutes WHERE minute < $1 ORDER BY minute LIMIT $2)', [cutoff, limits.batch]);
        n += await changed(db, 'DELETE FROM stats_minute_shards WHERE (minute, metric, slot) IN (SELECT minute, metric, slot FROM stats_minute_shards WHERE minute < $1 ORDER BY minute LIMIT $2)', [cutoff, limits.batch]);
      }
      return n;
    },
    /** One batch of idempotency records accepted before `before`; returns how many went. */
    async idempotency(before: number, batch: number): Promise<number> {
      return changed(db, 'DELETE FROM idempotency WHERE id IN (SELECT id FROM idempotency WHERE created_at < $1 ORDER BY created_at LIMIT $2)', [before, batch]);
    },
  };
}
