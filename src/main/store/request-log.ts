import type { Db } from './db.ts';
import { statsRollupPrune } from './stats.ts';

export interface RequestLogEntry {
  at: number;
  requestId: string;
  method: string;
  path: string;
  clientId: string | null;
  eventType: string | null;
  msgId: string | null;
  conversationId: string | null;
  status: number;
  code: string | null;
  latencyMs: number;
  replayed: boolean;
  /** The problem+json body of a rejected request, so the console can show the integrator's mistake. */
  problem: string | null;
  /** The address the request came from (the /64 for an IPv6 row that counts many requests). */
  remote: string | null;
}

export interface RequestLogRow extends RequestLogEntry {
  id: number;
  /** Requests this row stands for: 1, or more for repeated refusals counted together. */
  count: number;
  /** The last of those requests. */
  lastAt: number;
}

interface Raw {
  id: number;
  at: number;
  request_id: string;
  method: string;
  path: string;
  client_id: string | null;
  event_type: string | null;
  msg_id: string | null;
  conversation_id: string | null;
  status: number;
  code: string | null;
  latency_ms: number;
  replayed: number;
  problem: string | null;
  remote: string | null;
  count: number;
  last_at: number | null;
}

/** The console's request log filters; every one narrows an index seek, and the result is capped. */
export interface RequestFilter {
  onlyFailed: boolean;
  requestId?: string;
  msgId?: string;
  clientId?: string;
  /** Epoch ms bounds on the request time. */
  since?: number;
  until?: number;
  limit: number;
}

export interface PruneLimits {
  /** Rows logged before this time go. */
  before: number;
  /** Past this many rows the oldest go. */
  maxRows: number;
  /** At most this many rows per statement, so one prune never holds the writer for long. */
  batch: number;
}

/**
 * The longest an aggregated row keeps counting (requestLogAggregation.windowSeconds is at most an
 * hour): the since-bound stays an index range on `at` yet still finds a row that began earlier.
 */
const AGGREGATE_SPAN_MS = 3_600_000;

export function requestLogQueries(db: Db) {
  const insert = db.prepare(
    `INSERT INTO request_log (at, request_id, method, path, client_id, event_type, msg_id, conversation_id, status, code,
       latency_ms, replayed, problem, remote, agg_key)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const addCount = db.prepare('UPDATE request_log SET count = count + ?, last_at = max(coalesce(last_at, at), ?) WHERE agg_key = ?');
  const closeAggregate = db.prepare('UPDATE request_log SET agg_key = NULL WHERE agg_key = ?');
  const pruneOld = db.prepare('DELETE FROM request_log WHERE id IN (SELECT id FROM request_log WHERE at < ? LIMIT ?)');
  const pruneExcess = db.prepare('DELETE FROM request_log WHERE id IN (SELECT id FROM request_log WHERE id <= ? ORDER BY id LIMIT ?)');
  const bounds = db.prepare(
    // Three subqueries: SQLite answers a lone min() or max() from the end of an index, not a pair.
    `SELECT (SELECT min(id) FROM request_log) AS first, (SELECT max(id) FROM request_log) AS last,
            (SELECT min(at) FROM request_log) AS oldest`,
  );
  const recent = db.prepare('SELECT * FROM request_log ORDER BY id DESC LIMIT ?');
  const recentFailed = db.prepare('SELECT * FROM request_log WHERE status >= 400 ORDER BY id DESC LIMIT ?');
  const byRequestId = db.prepare('SELECT * FROM request_log WHERE request_id = ? ORDER BY id');
  // The dashboard's per-minute rollup is trimmed with the log (its own retention, a week): pruning
  // log rows never changes the counts, which keep the history as it happened.
  const rollup = statsRollupPrune(db);

  const toRow = (r: Raw): RequestLogRow => ({
    id: r.id,
    at: r.at,
    requestId: r.request_id,
    method: r.method,
    path: r.path,
    clientId: r.client_id,
    eventType: r.event_type,
    msgId: r.msg_id,
    conversationId: r.conversation_id,
    status: r.status,
    code: r.code,
    latencyMs: r.latency_ms,
    replayed: r.replayed === 1,
    problem: r.problem,
    remote: r.remote,
    count: r.count,
    lastAt: r.last_at ?? r.at,
  });

  return {
    /** One row; `aggKey` marks it as the row that later refusals of its kind are counted on. */
    insert(e: RequestLogEntry, aggKey: string | null = null): void {
      insert.run(
        e.at,
        e.requestId,
        e.method,
        e.path,
        e.clientId,
        e.eventType,
        e.msgId,
        e.conversationId,
        e.status,
        e.code,
        e.latencyMs,
        e.replayed ? 1 : 0,
        e.problem,
        e.remote,
        aggKey,
      );
    },
    /** Adds `count` more requests, the last at `lastAt`, to the row marked `aggKey`; the mark ends with `close`. */
    addToAggregate(aggKey: string, count: number, lastAt: number, close: boolean): void {
      if (count > 0) addCount.run(count, lastAt, aggKey);
      if (close) closeAggregate.run(aggKey);
    },
    recent(limit: number, onlyFailed = false): RequestLogRow[] {
      return ((onlyFailed ? recentFailed : recent).all(limit) as unknown as Raw[]).map(toRow);
    },
    /**
     * Newest first. An exact request_id or msg_id is one seek of its own index; a client walks
     * request_log_client newest first; a time range uses request_log_at. A row counting many
     * refusals matches a time range it overlaps.
     */
    filtered(f: RequestFilter): RequestLogRow[] {
      const where: string[] = [];
      const args: Array<string | number> = [];
      const add = (clause: string, ...values: Array<string | number>): void => {
        where.push(clause);
        args.push(...values);
      };
      if (f.requestId) add('request_id = ?', f.requestId);
      if (f.msgId) add('msg_id = ?', f.msgId);
      if (f.clientId) add('client_id = ?', f.clientId);
      if (f.since !== undefined) add('coalesce(last_at, at) >= ? AND at >= ?', f.since, f.since - AGGREGATE_SPAN_MS);
      if (f.until !== undefined) add('at <= ?', f.until);
      if (f.onlyFailed) add('status >= 400');
      if (where.length === 0) return ((recent.all(f.limit) as unknown as Raw[]).map(toRow));
      const sql = `SELECT * FROM request_log WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`;
      return (db.prepare(sql).all(...args, f.limit) as unknown as Raw[]).map(toRow);
    },
    byRequestId(requestId: string): RequestLogRow[] {
      return (byRequestId.all(requestId) as unknown as Raw[]).map(toRow);
    },
    /**
     * Deletes at most `batch` rows that are too old and `batch` beyond `maxRows`, and at most `batch`
     * dashboard rollup cells older than a week; returns how many went.
     */
    prune(limits: PruneLimits): number {
      let n = Number(pruneOld.run(limits.before, limits.batch).changes);
      const { last } = bounds.get() as { last: number | null };
      if (last !== null) n += Number(pruneExcess.run(last - limits.maxRows, limits.batch).changes);
      return n + rollup.prune(limits.batch);
    },
    /** Whether prune() has anything to do; cheap (index ends only), so the main thread can ask often. */
    needsPrune(limits: Omit<PruneLimits, 'batch'>): boolean {
      if (rollup.needed()) return true;
      const b = bounds.get() as { first: number | null; last: number | null; oldest: number | null };
      if (b.first === null || b.last === null || b.oldest === null) return false;
      // Row ids only grow and rows only leave from the old end, so the id span is the row count.
      return b.oldest < limits.before || b.last - b.first + 1 > limits.maxRows;
    },
  };
}

export type RequestLogQueries = ReturnType<typeof requestLogQueries>;
