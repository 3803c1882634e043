import { z } from 'zod';
import type { StoreContract } from '../contract.ts';
import { METRICS, type StatsSeries } from '../stats.ts';
import { int8, type PgQueryable } from './pool.ts';


const cell = z.object({ minute: int8, metric: z.enum(Object.keys(METRICS) as [keyof typeof METRICS, ...Array<keyof typeof METRICS>]), n: int8 });

/**
 * The dashboard's counts on PostgreSQL (stats.ts): the minutes are the sum of the old rollup and
 * its shards (migration 7's view stats_minutes_all), read in SQLite's primary-key order.
 */
export function pgStatsQueries(db: PgQueryable): StoreContract['stats'] {
  return {
    async series(since: number): Promise<StatsSeries> {
      const out: StatsSeries = { requests: new Map(), rejected: new Map(), replies: new Map(), handoffs: new Map(), deliveryFailures: new Map() };
      const rows = (await db.query('SELECT minute, metric, n FROM stats_minutes_all WHERE minute >= $1 AND n <> 0 ORDER BY minute, metric COLLATE "C"', [Math.floor(since / 60_000)])).rows;
      for (const r of rows) {
        const { minute, metric, n } = cell.parse(r);
        out[METRICS[metric]].set(minute, n);
      }
      return out;
    },
    needsHuman: async () => int8.parse((await db.query('SELECT count(*) AS n FROM conversations WHERE needs_human = 1')).rows[0].n),
  };
}
