import type { DatabaseSync } from 'node:sqlite';
import type { StatsSeries } from './stats.ts';

// The dashboard series as they were computed before issue 12 (GROUP BY over raw rows), for
// stats.test.ts and bench/stats.ts to compare with the rollup; not imported by the app.

export function rawStatsQueries(db: DatabaseSync): (since: number) => StatsSeries {
  const perMinute = (table: string, column: string, where = '', n = 'count(*)') =>
    db.prepare(`SELECT (${column} / 60000) AS minute, ${n} AS n FROM ${table} WHERE ${column} >= ? ${where} GROUP BY minute`);
  const queries = {
    requests: perMinute('request_log', 'at', '', 'sum(count)'),
    rejected: perMinute('request_log', 'at', 'AND status >= 400', 'sum(count)'),
    replies: perMinute('replies', 'created_at', "AND kind = 'auto' AND handoff = 0"),
    handoffs: perMinute('replies', 'created_at', 'AND handoff = 1'),
    deliveryFailures: perMinute('delivery_attempts', 'started_at', "AND outcome IN ('retry', 'dead')"),
  };
  return (since) => {
    const out = {} as StatsSeries;
    for (const [name, q] of Object.entries(queries) as Array<[keyof StatsSeries, (typeof queries)['requests']]>) {
      out[name] = new Map((q.all(since) as Array<{ minute: number; n: number }>).map((r) => [r.minute, r.n]));
    }
    return out;
  };
}
