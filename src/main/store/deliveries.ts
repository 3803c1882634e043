import type { Db } from './db.ts';

export const DELIVERY_STATES = ['pending', 'sent', 'dead', 'cancelled'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export interface DeliveryRow {
  id: number;
  replyId: number;
  replyMsgId: string;
  conversationId: string;
  clientId: string;
  sendUrl: string;
  /** The delivery's message_info as JSON text; the envelope is signed at each attempt. */
  messageInfo: string;
  state: DeliveryState;
  attempts: number;
  roundAttempts: number;
  nextAttemptAt: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface AttemptRow {
  attempt: number;
  startedAt: number;
  durationMs: number;
  status: number | null;
  error: string | null;
  outcome: 'sent' | 'retry' | 'dead' | 'cancelled';
}

export interface AttemptRecord extends AttemptRow {
  deliveryId: number;
  state: DeliveryState;
  nextAttemptAt: number;
  now: number;
}

interface Raw {
  id: number;
  reply_id: number;
  reply_msg_id: string;
  conversation_id: string;
  client_id: string;
  send_url: string;
  message_info: string;
  state: DeliveryState;
  attempts: number;
  round_attempts: number;
  next_attempt_at: number;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

const toRow = (r: Raw): DeliveryRow => ({
  id: r.id,
  replyId: r.reply_id,
  replyMsgId: r.reply_msg_id,
  conversationId: r.conversation_id,
  clientId: r.client_id,
  sendUrl: r.send_url,
  messageInfo: r.message_info,
  state: r.state,
  attempts: r.attempts,
  roundAttempts: r.round_attempts,
  nextAttemptAt: r.next_attempt_at,
  lastStatus: r.last_status,
  lastError: r.last_error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/**
 * Due deliveries, in order per conversation: only the oldest pending delivery of a conversation
 * may go. The indexes are named because the planner, left alone, picked a plan quadratic in the
 * number of pending deliveries (2.6 s per scan at 4,700 pending; 0.25 ms with these).
 */
export const DUE_SQL = `SELECT d.* FROM deliveries d INDEXED BY deliveries_due
  WHERE d.state = 'pending' AND d.next_attempt_at <= ?
    AND NOT EXISTS (SELECT 1 FROM deliveries e INDEXED BY deliveries_pending
                    WHERE e.conversation_id = d.conversation_id AND e.state = 'pending' AND e.id < d.id)
  ORDER BY d.next_attempt_at, d.id LIMIT ?`;

export function deliveryQueries(db: Db) {
  const insert = db.prepare(
    `INSERT INTO deliveries (reply_id, reply_msg_id, conversation_id, client_id, send_url, message_info, state, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const due = db.prepare(DUE_SQL);
  const nextDue = db.prepare("SELECT min(next_attempt_at) AS at FROM deliveries WHERE state = 'pending'");
  const byId = db.prepare('SELECT * FROM deliveries WHERE id = ?');
  const list = db.prepare('SELECT * FROM deliveries ORDER BY id DESC LIMIT ?');
  const listByState = db.prepare('SELECT * FROM deliveries WHERE state = ? ORDER BY id DESC LIMIT ?');
  const update = db.prepare(
    `UPDATE deliveries SET state = ?, attempts = attempts + 1, round_attempts = round_attempts + 1, next_attempt_at = ?,
       last_status = ?, last_error = ?, updated_at = ? WHERE id = ? AND state = 'pending'`,
  );
  const insertAttempt = db.prepare(
    'INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status, error, outcome) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const attempts = db.prepare('SELECT attempt, started_at, duration_ms, status, error, outcome FROM delivery_attempts WHERE delivery_id = ? ORDER BY attempt');
  const cancelOne = db.prepare("UPDATE deliveries SET state = 'cancelled', last_error = ?, updated_at = ? WHERE id = ? AND state = 'pending'");
  const cancelConversation = db.prepare(
    "UPDATE deliveries SET state = 'cancelled', last_error = ?, updated_at = ? WHERE conversation_id = ? AND state = 'pending'",
  );
  const retry = db.prepare(
    "UPDATE deliveries SET state = 'pending', round_attempts = 0, next_attempt_at = ?, updated_at = ? WHERE id = ? AND state = 'dead'",
  );
  const counts = db.prepare('SELECT state, count(*) AS n FROM deliveries GROUP BY state');

  return {
    insert(d: Omit<DeliveryRow, 'id' | 'attempts' | 'roundAttempts' | 'lastStatus' | 'lastError' | 'updatedAt'>): number {
      return Number(
        insert.run(d.replyId, d.replyMsgId, d.conversationId, d.clientId, d.sendUrl, d.messageInfo, d.state, d.nextAttemptAt, d.createdAt, d.createdAt)
          .lastInsertRowid,
      );
    },
    due(now: number, limit: number): DeliveryRow[] {
      return (due.all(now, limit) as unknown as Raw[]).map(toRow);
    },
    nextDueAt(): number | null {
      return (nextDue.get() as { at: number | null }).at;
    },
    get(id: number): DeliveryRow | undefined {
      const r = byId.get(id) as Raw | undefined;
      return r && toRow(r);
    },
    list(state: DeliveryState | undefined, limit: number): DeliveryRow[] {
      return ((state ? listByState.all(state, limit) : list.all(limit)) as unknown as Raw[]).map(toRow);
    },
    /** Records an attempt and its verdict; a delivery cancelled meanwhile is left as it is. */
    recordAttempt(a: AttemptRecord): boolean {
      const changed = update.run(a.state, a.nextAttemptAt, a.status, a.error, a.now, a.deliveryId).changes > 0;
      if (changed) insertAttempt.run(a.deliveryId, a.attempt, a.startedAt, a.durationMs, a.status, a.error, a.outcome);
      return changed;
    },
    attempts(deliveryId: number): AttemptRow[] {
      return (attempts.all(deliveryId) as Array<{ attempt: number; started_at: number; duration_ms: number; status: number | null; error: string | null; outcome: AttemptRow['outcome'] }>).map(
        (r) => ({ attempt: r.attempt, startedAt: r.started_at, durationMs: r.duration_ms, status: r.status, error: r.error, outcome: r.outcome }),
      );
    },
    cancel(id: number, reason: string, now: number): boolean {
      return cancelOne.run(reason, now, id).changes > 0;
    },
    cancelForConversation(conversationId: string, reason: string, now: number): number {
      return Number(cancelConversation.run(reason, now, conversationId).changes);
    },
    /** A dead delivery goes back to pending with a fresh retry schedule. */
    retry(id: number, now: number): boolean {
      return retry.run(now, now, id).changes > 0;
    },
    countByState(): Record<DeliveryState, number> {
      const out: Record<DeliveryState, number> = { pending: 0, sent: 0, dead: 0, cancelled: 0 };
      for (const r of counts.all() as Array<{ state: DeliveryState; n: number }>) out[r.state] = r.n;
      return out;
    },
  };
}

export type DeliveryQueries = ReturnType<typeof deliveryQueries>;
