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

/** A request as the log keeps it. */
export interface LoggedRequest extends RequestLogEntry {
  /**
   * Its signature was checked against the client's secret. An unverified request (refused before
   * or at authentication) only claims `clientId`: the row keeps it as `claimedClientId`.
   */
  verified: boolean;
}

export interface RequestLogRow extends LoggedRequest {
  id: number;
  /** The client an unverified request named; null on a verified row, whose `clientId` is its client. */
  claimedClientId: string | null;
  /** Requests this row stands for: 1, or more for repeated refusals counted together. */
  count: number;
  /** The last of those requests. */
  lastAt: number;
}

/** A request_log row as stored (either database, integers read as numbers). */
export interface RequestLogRaw {
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
  verified: number;
  claimed_client: string | null;
}

/** A stored row as the console reads it (either store). */
export function toRequestLogRow(r: RequestLogRaw): RequestLogRow {
  return {
    id: r.id,
    at: r.at,
    requestId: r.request_id,
    method: r.method,
    path: r.path,
    clientId: r.client_id,
    claimedClientId: r.claimed_client,
    verified: r.verified === 1,
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
  };
}

/** The console's request log filters; every one narrows an index seek, and the result is capped. */
export interface RequestFilter {
  onlyFailed: boolean;
  requestId?: string;
  msgId?: string;
  /** That client's verified rows only, unless `withClaims`. */
  clientId?: string;
  /** With clientId: also the unverified rows that named that client (anyone can send those). */
  withClaims?: boolean;
  /** Epoch ms bounds on the request time. */
  since?: number;
  until?: number;
  limit: number;
}

export interface PruneLimits {
  /** Rows logged before this time go. */
  before: number;
  /** Past this many verified rows the oldest verified go. */
  maxRows: number;
  /** Past this many unverified rows the oldest unverified go: a flood of them never pushes out verified rows. */
  maxUnverifiedRows: number;
  /** At most this many rows per statement, so one prune never holds the writer for long. */
  batch: number;
}

/**
 * The longest an aggregated row keeps counting (requestLogAggregation.windowSeconds is at most an
 * hour): the since-bound stays an index range on `at` yet still finds a row that began earlier.
 */
export const AGGREGATE_SPAN_MS = 3_600_000;

export function requestLogQueries(db: Db) {
  const insert = db.prepare(
    `INSERT INTO request_log (at, request_id, method, path, client_id, claimed_client, verified, event_type, msg_id, conversation_id,
       status, code, latency_ms, replayed, problem, remote, agg_key)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const addCount = db.prepare('UPDATE request_log SET count = count + ?, last_at = max(coalesce(last_at, at), ?) WHERE agg_key = ?');
  const closeAggregate = db.prepare('UPDATE request_log SET agg_key = NULL WHERE agg_key = ?');
  const pruneOld = db.prepare('DELETE FROM request_log WHERE id IN (SELECT id FROM request_log WHERE at < ? LIMIT ?)');
  const pruneExcess = db.prepare('DELETE FROM request_log WHERE id IN (SELECT id FROM request_log WHERE verified = ? ORDER BY id LIMIT ?)');
  const oldestAt = db.prepare('SELECT min(at) AS oldest FROM request_log');
  // Kept by triggers (migration 022): reading them costs two rows, not a count of the table.
  const sizes = db.prepare(
    `SELECT (SELECT n FROM request_log_rows WHERE verified = 1) AS verified, (SELECT n FROM request_log_rows WHERE verified = 0) AS unverified`,
  );
  const recent = db.prepare('SELECT * FROM request_log ORDER BY id DESC LIMIT ?');
  const recentFailed = db.prepare('SELECT * FROM request_log WHERE status >= 400 ORDER BY id DESC LIMIT ?');
  const byRequestId = db.prepare('SELECT * FROM request_log WHERE request_id = ? ORDER BY id');
  // The dashboard's per-minute rollup is trimmed with the log (its own retention, a week): pruning
  // log rows never changes the counts, which keep the history as it happened.
  const rollup = statsRollupPrune(db);

  const toRow = toRequestLogRow;
  const rowCounts = (): { verified: number; unverified: number } => {
    const r = sizes.get() as { verified: number | null; unverified: number | null };
    return { verified: r.verified ?? 0, unverified: r.unverified ?? 0 };
  };

  return {
    /**
     * One row; `aggKey` marks it as the row that later refusals of its kind are counted on. The
     * client an unverified request named is kept as its claim, never as the row's client.
     */
    insert(e: LoggedRequest, aggKey: string | null = null): void {
      insert.run(
        e.at,
        e.requestId,
        e.method,
        e.path,
        e.verified ? e.clientId : null,
        e.verified ? null : e.clientId,
        e.verified ? 1 : 0,
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
      return ((onlyFailed ? recentFailed : recent).all(limit) as unknown as RequestLogRaw[]).map(toRow);
    },
    /**
     * Newest first. An exact request_id or msg_id is one seek of its own index; a client walks
     * request_log_client newest first (its claims, request_log_claimed); a time range uses
     * request_log_at. A row counting many refusals matches a time range it overlaps.
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
      if (f.since !== undefined) add('coalesce(last_at, at) >= ? AND at >= ?', f.since, f.since - AGGREGATE_SPAN_MS);
      if (f.until !== undefined) add('at <= ?', f.until);
      if (f.onlyFailed) add('status >= 400');
      const read = (clause?: string, value?: string): RequestLogRow[] => {
        const all = clause === undefined ? where : [...where, clause];
        if (all.length === 0) return (recent.all(f.limit) as unknown as RequestLogRaw[]).map(toRow);
        const sql = `SELECT * FROM request_log WHERE ${all.join(' AND ')} ORDER BY id DESC LIMIT ?`;
        return (db.prepare(sql).all(...args, ...(value === undefined ? [] : [value]), f.limit) as unknown as RequestLogRaw[]).map(toRow);
      };
      if (!f.clientId) return read();
      const own = read('client_id = ?', f.clientId);
      if (!f.withClaims) return own;
      // Two walks, each on its own index and stopped at the limit, merged: an OR would sort every match.
      return [...own, ...read('claimed_client = ?', f.clientId)].sort((a, b) => b.id - a.id).slice(0, f.limit);
    },
    byRequestId(requestId: string): RequestLogRow[] {
      return (byRequestId.all(requestId) as unknown as RequestLogRaw[]).map(toRow);
    },
    /** Rows of each kind now in the log. */
    rowCounts,
    /**
     * Deletes at most `batch` rows that are too old, `batch` verified rows beyond `maxRows` and
     * `batch` unverified rows beyond `maxUnverifiedRows` (each kind from its own oldest end), and at
     * most `batch` dashboard rollup cells older than a week; returns how many went.
     */
    prune(limits: PruneLimits): number {
      let n = Number(pruneOld.run(limits.before, limits.batch).changes);
      const counts = rowCounts();
      const excess = (kind: 0 | 1, over: number): number => (over > 0 ? Number(pruneExcess.run(kind, Math.min(over, limits.batch)).changes) : 0);
      n += excess(1, counts.verified - limits.maxRows);
      n += excess(0, counts.unverified - limits.maxUnverifiedRows);
      return n + rollup.prune(limits.batch);
    },
    /** Whether prune() has anything to do; cheap (an index end and two counts), so the main thread can ask often. */
    needsPrune(limits: Omit<PruneLimits, 'batch'>): boolean {
      if (rollup.needed()) return true;
      const { oldest } = oldestAt.get() as { oldest: number | null };
      if (oldest === null) return false;
      const counts = rowCounts();
      return oldest < limits.before || counts.verified > limits.maxRows || counts.unverified > limits.maxUnverifiedRows;
    },
  };
}

export type RequestLogQueries = ReturnType<typeof requestLogQueries>;
