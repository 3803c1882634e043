import type { Db } from './db.ts';
import { STATS_RETENTION_MINUTES } from './migrations/012-stats-rollup.ts';

/** The dashboard's per-minute series. */
export type StatsSeries = Record<'requests' | 'rejected' | 'replies' | 'handoffs' | 'deliveryFailures', Map<number, number>>;

/** Rollup metric names (migration 012; PostgreSQL's migration 4) and the series each one feeds. */
export const METRICS = {
  requests: 'requests',
  rejected: 'rejected',
  replies: 'replies',
  handoffs: 'handoffs',
  delivery_failures: 'deliveryFailures',
} as const satisfies Record<string, keyof StatsSeries>;

/**
 * Per-minute counts for the dashboard, read from the stats_minutes rollup that triggers keep
 * (migration 012): a window costs a primary-key range of at most five rows a minute, whatever
 * the traffic. A request log row counts in the minute it began, including refusals counted on it
 * later; pruned request log rows stay counted (the rollup keeps its own week of history).
 */
export function statsQueries(db: Db) {
  const window = db.prepare('SELECT minute, metric, n FROM stats_minutes WHERE minute >= ? AND n != 0');
  // A day is 7,200 cells: rows as arrays take a quarter of the time of rows as objects.
  window.setReturnArrays(true);
  const needsHuman = db.prepare('SELECT count(*) AS n FROM conversations WHERE needs_human = 1');

  return {
    /** Counts from the minute holding `since` on, keyed by minute (epoch ms / 60000); minutes without any are absent. */
    series(since: number): StatsSeries {
      const out: StatsSeries = { requests: new Map(), rejected: new Map(), replies: new Map(), handoffs: new Map(), deliveryFailures: new Map() };
      for (const [minute, metric, n] of window.all(Math.floor(since / 60_000)) as unknown as Array<[number, keyof typeof METRICS, number]>) {
        out[METRICS[metric]].set(minute, n);
      }
      return out;
    },
    needsHuman(): number {
      return (needsHuman.get() as { n: number }).n;
    },
  };
}

/**
 * Trimming the rollup to STATS_RETENTION_MINUTES before its newest minute (no clock needed, and a
 * late write from long ago removes nothing newer). Run by the request log's maintenance, so it
 * rides the service's existing once-a-minute, batch-per-write prune instead of every write.
 */
export function statsRollupPrune(db: Db) {
  const bounds = db.prepare('SELECT (SELECT min(minute) FROM stats_minutes) AS first, (SELECT max(minute) FROM stats_minutes) AS last');
  const trim = db.prepare(
    'DELETE FROM stats_minutes WHERE (minute, metric) IN (SELECT minute, metric FROM stats_minutes WHERE minute < ? ORDER BY minute LIMIT ?)',
  );
  const cutoff = (): number | null => {
    const b = bounds.get() as { first: number | null; last: number | null };
    return b.first !== null && b.last !== null && b.first < b.last - STATS_RETENTION_MINUTES ? b.last - STATS_RETENTION_MINUTES : null;
  };
  return {
    /** Whether anything is older than the retention; reads the two ends of the primary key. */
    needed(): boolean {
      return cutoff() !== null;
    },
    /** Deletes at most `batch` cells past the retention; returns how many went. */
    prune(batch: number): number {
      const before = cutoff();
      return before === null ? 0 : Number(trim.run(before, batch).changes);
    },
  };
}
