import { z } from 'zod';
import type { StoreContract } from '../contract.ts';
import { AGGREGATE_SPAN_MS, toRequestLogRow, type RequestFilter, type RequestLogRow } from '../request-log.ts';
import { pgIngestStore } from './ingest-queries.ts';
import { int8, type PgQueryable } from './pool.ts';
import { pgPruneQueries } from './prune-queries.ts';


const logRow = z.object({
  id: int8,
  at: int8,
  request_id: z.string(),
  method: z.string(),
  path: z.string(),
  client_id: z.string().nullable(),
  event_type: z.string().nullable(),
  msg_id: z.string().nullable(),
  conversation_id: z.string().nullable(),
  status: z.number(),
  code: z.string().nullable(),
  latency_ms: z.number(),
  replayed: z.number(),
  problem: z.string().nullable(),
  remote: z.string().nullable(),
  count: z.number(),
  last_at: int8.nullable(),
  verified: z.number(),
  claimed_client: z.string().nullable(),
});

const toRow = (raw: unknown): RequestLogRow => toRequestLogRow(logRow.parse(raw));

/**
 * The request log on PostgreSQL (request-log.ts): the writes ingest makes (pgIngestStore), the
 * console's reads, and retention (prune-queries.ts). Row counts are the sum over the old counter
 * and its shards (migration 7's request_log_rows_all).
 */
export function pgRequestLogQueries(db: PgQueryable): StoreContract['requestLog'] {
  const { insert, addToAggregate } = pgIngestStore(db).requestLog;
  const prune = pgPruneQueries(db);
  const rows = async (sql: string, values: unknown[]): Promise<RequestLogRow[]> => (await db.query(sql, values)).rows.map(toRow);
  const recent = (limit: number, onlyFailed = false): Promise<RequestLogRow[]> =>
    rows(`SELECT * FROM request_log ${onlyFailed ? 'WHERE status >= 400' : ''} ORDER BY id DESC LIMIT $1`, [limit]);
  return {
    insert,
    addToAggregate,
    recent,
    async filtered(f: RequestFilter): Promise<RequestLogRow[]> {
      const where: string[] = [];
      const args: unknown[] = [];
      const next = (value: unknown): string => `$${args.push(value)}`;
      if (f.requestId) where.push(`request_id = ${next(f.requestId)}`);
      if (f.msgId) where.push(`msg_id = ${next(f.msgId)}`);
      if (f.since !== undefined) where.push(`coalesce(last_at, at) >= ${next(f.since)} AND at >= ${next(f.since - AGGREGATE_SPAN_MS)}`);
      if (f.until !== undefined) where.push(`at <= ${next(f.until)}`);
      if (f.onlyFailed) where.push('status >= 400');
      const read = (column?: 'client_id' | 'claimed_client', value?: string): Promise<RequestLogRow[]> => {
        const values = [...args];
        const all = column === undefined ? where : [...where, `${column} = $${values.push(value)}`];
        if (all.length === 0) return recent(f.limit);
        return rows(`SELECT * FROM request_log WHERE ${all.join(' AND ')} ORDER BY id DESC LIMIT $${values.push(f.limit)}`, values);
      };
      if (!f.clientId) return read();
      const own = await read('client_id', f.clientId);
      if (!f.withClaims) return own;
      // Two walks, each on its own index and stopped at the limit, merged (as SQLite).
      return [...own, ...(await read('claimed_client', f.clientId))].sort((a, b) => b.id - a.id).slice(0, f.limit);
    },
    byRequestId: (requestId: string) => rows('SELECT * FROM request_log WHERE request_id = $1 ORDER BY id', [requestId]),
    async rowCounts(): Promise<{ verified: number; unverified: number }> {
      const counts = (await db.query('SELECT verified, n FROM request_log_rows_all')).rows as Array<{ verified: number; n: unknown }>;
      const of = (kind: number): number => int8.parse(counts.find((r) => r.verified === kind)?.n ?? 0);
      return { verified: of(1), unverified: of(0) };
    },
    prune: (limits) => prune.requestLog(limits),
    needsPrune: (limits) => prune.requestLogNeedsPrune(limits),
  };
}
