import type { Db } from './db.ts';

/** Per-minute counts for the dashboard, from indexed time columns. */
export function statsQueries(db: Db) {
  const perMinute = (table: string, column: string, where = '', n = 'count(*)'): ReturnType<Db['prepare']> =>
    db.prepare(`SELECT (${column} / 60000) AS minute, ${n} AS n FROM ${table} WHERE ${column} >= ? ${where} GROUP BY minute`);
  const queries = {
    // A request log row can stand for many refused requests (its count).
    requests: perMinute('request_log', 'at', '', 'sum(count)'),
    rejected: perMinute('request_log', 'at', 'AND status >= 400', 'sum(count)'),
    replies: perMinute('replies', 'created_at', "AND kind = 'auto' AND handoff = 0"),
    handoffs: perMinute('replies', 'created_at', 'AND handoff = 1'),
    deliveryFailures: perMinute('delivery_attempts', 'started_at', "AND outcome IN ('retry', 'dead')"),
  };
  const needsHuman = db.prepare('SELECT count(*) AS n FROM conversations WHERE needs_human = 1');

  return {
    series(since: number): Record<keyof typeof queries, Map<number, number>> {
      const out = {} as Record<keyof typeof queries, Map<number, number>>;
      for (const [name, q] of Object.entries(queries) as Array<[keyof typeof queries, ReturnType<Db['prepare']>]>) {
        out[name] = new Map((q.all(since) as Array<{ minute: number; n: number }>).map((r) => [r.minute, r.n]));
      }
      return out;
    },
    needsHuman(): number {
      return (needsHuman.get() as { n: number }).n;
    },
  };
}
