import type { Db } from './db.ts';

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
}

export interface RequestLogRow extends RequestLogEntry {
  id: number;
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
}

export function requestLogQueries(db: Db) {
  const insert = db.prepare(
    `INSERT INTO request_log (at, request_id, method, path, client_id, event_type, msg_id, conversation_id, status, code,
       latency_ms, replayed, problem)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const recent = db.prepare('SELECT * FROM request_log ORDER BY id DESC LIMIT ?');
  const recentFailed = db.prepare('SELECT * FROM request_log WHERE status >= 400 ORDER BY id DESC LIMIT ?');
  const byRequestId = db.prepare('SELECT * FROM request_log WHERE request_id = ? ORDER BY id');
  const prune = db.prepare('DELETE FROM request_log WHERE at < ?');

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
  });

  return {
    insert(e: RequestLogEntry): void {
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
      );
    },
    recent(limit: number, onlyFailed = false): RequestLogRow[] {
      return ((onlyFailed ? recentFailed : recent).all(limit) as unknown as Raw[]).map(toRow);
    },
    byRequestId(requestId: string): RequestLogRow[] {
      return (byRequestId.all(requestId) as unknown as Raw[]).map(toRow);
    },
    pruneBefore(at: number): number {
      return Number(prune.run(at).changes);
    },
  };
}

export type RequestLogQueries = ReturnType<typeof requestLogQueries>;
