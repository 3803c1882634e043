import type { Db } from './db.ts';
import { laneQueries, originOf } from './delivery-lanes.ts';

export const DELIVERY_STATES = ['pending', 'sent', 'dead', 'cancelled'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** An AI auto reply, or an operator's answer from the console (never cancelled by a takeover). */
export type DeliveryKind = 'auto' | 'operator';

export interface DeliveryRow {
  id: number;
  kind: DeliveryKind;
  replyId: number;
  replyMsgId: string;
  conversationId: string;
  clientId: string;
  sendUrl: string;
  /** send_url's scheme://host:port (see originOf): the receiver whose share of the outbox it uses. */
  origin: string;
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

/** What the console's Deliveries view lists: retrying, dead, and (on request) cancelled ones. */
export type ProblemState = 'retrying' | 'dead' | 'cancelled';

export interface ProblemRow extends DeliveryRow {
  problem: ProblemState;
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
  kind: DeliveryKind;
  reply_id: number;
  reply_msg_id: string;
  conversation_id: string;
  client_id: string;
  send_url: string;
  origin: string;
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

/** A delivery row as SQL names it, as the application reads it (PostgreSQL's lease claims read the same columns). */
export const toDeliveryRow = (r: Raw): DeliveryRow => ({
  id: r.id,
  kind: r.kind,
  replyId: r.reply_id,
  replyMsgId: r.reply_msg_id,
  conversationId: r.conversation_id,
  clientId: r.client_id,
  sendUrl: r.send_url,
  origin: r.origin,
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
 * number of pending deliveries (2.6 s per scan at 4,700 pending; 0.25 ms with these). All clients
 * together, oldest first: what is due as a whole (the outbox reads it lane by lane, delivery-lanes.ts).
 */
export const DUE_SQL = `SELECT d.* FROM deliveries d INDEXED BY deliveries_due
  WHERE d.state = 'pending' AND d.next_attempt_at <= ?
    AND NOT EXISTS (SELECT 1 FROM deliveries e INDEXED BY deliveries_pending
                    WHERE e.conversation_id = d.conversation_id AND e.state = 'pending' AND e.id < d.id)
  ORDER BY d.next_attempt_at, d.id LIMIT ?`;

export function deliveryQueries(db: Db) {
  const insert = db.prepare(
    `INSERT INTO deliveries (reply_id, reply_msg_id, conversation_id, client_id, send_url, message_info, state, next_attempt_at, created_at, updated_at, kind, origin)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const due = db.prepare(DUE_SQL);
  // Named: without statistics the planner reads every pending row through deliveries_state (20% of the main thread).
  const nextDue = db.prepare("SELECT min(next_attempt_at) AS at FROM deliveries INDEXED BY deliveries_due WHERE state = 'pending'");
  const byId = db.prepare('SELECT * FROM deliveries WHERE id = ?');
  const list = db.prepare('SELECT * FROM deliveries ORDER BY id DESC LIMIT ?');
  const listByState = db.prepare('SELECT * FROM deliveries WHERE state = ? ORDER BY id DESC LIMIT ?');
  const update = db.prepare(
    `UPDATE deliveries SET state = ?, attempts = attempts + 1, round_attempts = round_attempts + 1, next_attempt_at = ?,
       last_status = ?, last_error = ?, updated_at = ? WHERE id = ? AND state = 'pending'`,
  );
  // Cancelled while its request was on the wire: the receiver may have it, so the attempt is told
  // (and counted); the cancel, its reason and its time (what an Undo of a stop matches) stand.
  const countCancelled = db.prepare("UPDATE deliveries SET attempts = attempts + 1 WHERE id = ? AND state = 'cancelled'");
  // ...unless that try was accepted: the customer has the reply, so it is sent (never sent again,
  // nor put back by an Undo of a stop), whatever the cancel hoped for.
  const sentAfterCancel = db.prepare(
    "UPDATE deliveries SET state = 'sent', attempts = attempts + 1, last_status = ?, last_error = NULL, updated_at = ? WHERE id = ? AND state = 'cancelled'",
  );
  const insertAttempt = db.prepare(
    'INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status, error, outcome) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const attempts = db.prepare('SELECT attempt, started_at, duration_ms, status, error, outcome FROM delivery_attempts WHERE delivery_id = ? ORDER BY attempt');
  const lastAttempt = db.prepare('SELECT status, error FROM delivery_attempts WHERE delivery_id = ? ORDER BY attempt DESC LIMIT 1');
  const cancelOne = db.prepare("UPDATE deliveries SET state = 'cancelled', last_error = ?, updated_at = ? WHERE id = ? AND state = 'pending'");
  // Stopping auto-reply cancels what the AI would still send, never an operator's answer.
  const cancelConversation = db.prepare(
    "UPDATE deliveries SET state = 'cancelled', last_error = ?, updated_at = ? WHERE conversation_id = ? AND state = 'pending' AND kind = 'auto'",
  );
  // Undo of a stop: the auto replies that stop cancelled (its reason, its time) are due again now.
  const restoreCancelled = db.prepare(
    "UPDATE deliveries SET state = 'pending', next_attempt_at = ?, updated_at = ? WHERE conversation_id = ? AND state = 'cancelled' AND kind = 'auto' AND last_error = ? AND updated_at = ?",
  );
  const retry = db.prepare(
    "UPDATE deliveries SET state = 'pending', round_attempts = 0, next_attempt_at = ?, updated_at = ? WHERE id = ? AND state = 'dead'",
  );
  // A delivery waiting for its next try goes now; its retry schedule carries on from where it was.
  // One already due (held behind an earlier one, or being tried) keeps its time and still counts.
  const retryNow = db.prepare(
    `UPDATE deliveries SET next_attempt_at = min(next_attempt_at, ?1), updated_at = ?1,
       -- An early try is an extra one: if it fails, the wait after it is the step it was waiting out,
       -- not the next one (a Retry now at 09:22 that fails must not move a 09:26 try to 09:52).
       round_attempts = CASE WHEN next_attempt_at > ?1 AND round_attempts > 0 THEN round_attempts - 1 ELSE round_attempts END
     WHERE id = ?2 AND state = 'pending' AND attempts > 0`,
  );
  // The console's Cancel: only a delivery that failed (retrying or dead); one never tried is on its way.
  const cancelFailed = db.prepare(
    "UPDATE deliveries SET state = 'cancelled', last_error = ?, updated_at = ? WHERE id = ? AND ((state = 'pending' AND attempts > 0) OR state = 'dead')",
  );
  const stateOf = db.prepare('SELECT state FROM deliveries WHERE id = ?');
  const byIds = db.prepare('SELECT * FROM deliveries WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id');
  const autoDueNow = db.prepare(
    "UPDATE deliveries SET next_attempt_at = ? WHERE conversation_id = ? AND state = 'pending' AND kind = 'auto' AND next_attempt_at > ?",
  );
  const retrying = db.prepare(
    `SELECT d.* FROM deliveries d INDEXED BY deliveries_retrying
     WHERE d.state = 'pending' AND d.attempts > 0 AND (?1 IS NULL OR d.client_id = ?1) ORDER BY d.updated_at DESC, d.id DESC LIMIT ?2`,
  );
  const dead = db.prepare(
    `SELECT d.* FROM deliveries d INDEXED BY deliveries_dead
     WHERE d.state = 'dead' AND (?1 IS NULL OR d.client_id = ?1) ORDER BY d.updated_at DESC, d.id DESC LIMIT ?2`,
  );
  const cancelled = db.prepare(
    `SELECT d.* FROM deliveries d INDEXED BY deliveries_cancelled
     WHERE d.state = 'cancelled' AND (?1 IS NULL OR d.client_id = ?1) ORDER BY d.updated_at DESC, d.id DESC LIMIT ?2`,
  );
  const problemQuery = { retrying, dead, cancelled } as const;
  const deadIds = db.prepare("SELECT id FROM deliveries WHERE state = 'dead' AND (?1 IS NULL OR client_id = ?1) ORDER BY id LIMIT ?2");
  const counts = db.prepare('SELECT state, count(*) AS n FROM deliveries GROUP BY state');

  return {
    insert(d: Omit<DeliveryRow, 'id' | 'kind' | 'origin' | 'attempts' | 'roundAttempts' | 'lastStatus' | 'lastError' | 'updatedAt'> & { kind?: DeliveryKind }): number {
      return Number(
        insert.run(d.replyId, d.replyMsgId, d.conversationId, d.clientId, d.sendUrl, d.messageInfo, d.state, d.nextAttemptAt, d.createdAt, d.createdAt, d.kind ?? 'auto', originOf(d.sendUrl))
          .lastInsertRowid,
      );
    },
    /** Due deliveries of every client, oldest first, up to `limit`. */
    due(now: number, limit: number): DeliveryRow[] {
      return (due.all(now, limit) as unknown as Raw[]).map(toDeliveryRow);
    },
    ...laneQueries(db, (rows) => (rows as Raw[]).map(toDeliveryRow)),
    nextDueAt(): number | null {
      return (nextDue.get() as { at: number | null }).at;
    },
    get(id: number): DeliveryRow | undefined {
      const r = byId.get(id) as Raw | undefined;
      return r && toDeliveryRow(r);
    },
    list(state: DeliveryState | undefined, limit: number): DeliveryRow[] {
      return ((state ? listByState.all(state, limit) : list.all(limit)) as unknown as Raw[]).map(toDeliveryRow);
    },
    /**
     * Records an attempt and its verdict. A delivery cancelled meanwhile stays cancelled, its
     * attempt recorded, unless the receiver accepted that attempt: then it is sent.
     */
    recordAttempt(a: AttemptRecord): boolean {
      const changed = update.run(a.state, a.nextAttemptAt, a.status, a.error, a.now, a.deliveryId).changes > 0;
      const delivered = !changed && a.outcome === 'sent' && sentAfterCancel.run(a.status, a.now, a.deliveryId).changes > 0;
      if (changed || delivered || countCancelled.run(a.deliveryId).changes > 0) insertAttempt.run(a.deliveryId, a.attempt, a.startedAt, a.durationMs, a.status, a.error, a.outcome);
      return changed || delivered;
    },
    attempts(deliveryId: number): AttemptRow[] {
      return (attempts.all(deliveryId) as Array<{ attempt: number; started_at: number; duration_ms: number; status: number | null; error: string | null; outcome: AttemptRow['outcome'] }>).map(
        (r) => ({ attempt: r.attempt, startedAt: r.started_at, durationMs: r.duration_ms, status: r.status, error: r.error, outcome: r.outcome }),
      );
    },
    /** The last recorded try's answer, or null before the first. */
    lastAttempt(deliveryId: number): { status: number | null; error: string | null } | null {
      const r = lastAttempt.get(deliveryId) as { status: number | null; error: string | null } | undefined;
      return r ? { status: r.status, error: r.error } : null;
    },
    cancel(id: number, reason: string, now: number): boolean {
      return cancelOne.run(reason, now, id).changes > 0;
    },
    cancelForConversation(conversationId: string, reason: string, now: number): number {
      return Number(cancelConversation.run(reason, now, conversationId).changes);
    },
    restoreCancelled(conversationId: string, reason: string, cancelledAt: number, now: number): number {
      return Number(restoreCancelled.run(now, now, conversationId, reason, cancelledAt).changes);
    },
    /** A dead delivery goes back to pending with a fresh retry schedule. */
    retry(id: number, now: number): boolean {
      return retry.run(now, now, id).changes > 0;
    },
    /** A delivery waiting for its next retry is tried now (the operator asked); its schedule carries on. */
    retryNow(id: number, now: number): boolean {
      return retryNow.run(now, id).changes > 0;
    },
    /** The console's Cancel of a retrying or dead delivery; `reason` names who cancelled it. */
    cancelFailed(id: number, reason: string, now: number): boolean {
      return cancelFailed.run(reason, now, id).changes > 0;
    },
    /** The state as stored now: the outbox's last look before it sends. */
    stateOf(id: number): DeliveryState | undefined {
      return (stateOf.get(id) as { state: DeliveryState } | undefined)?.state;
    },
    /** These deliveries, by id (those that exist). */
    byIds(ids: readonly number[]): DeliveryRow[] {
      return (byIds.all(JSON.stringify(ids)) as unknown as Raw[]).map(toDeliveryRow);
    },
    /** Auto replies of a conversation waiting for a retry are due now, to be re-checked (and cancelled) at once. */
    autoDueNow(conversationId: string, now: number): number {
      return Number(autoDueNow.run(now, conversationId, now).changes);
    },
    /**
     * Retrying (pending after a failed attempt), dead and cancelled deliveries, newest change first;
     * lastStatus/lastError are the last attempt's, except that a cancelled one's lastError says why it was cancelled.
     */
    problems(states: readonly ProblemState[], clientId: string | null, limit: number): ProblemRow[] {
      const rows: ProblemRow[] = [];
      for (const state of new Set(states)) {
        for (const r of problemQuery[state].all(clientId, limit) as unknown as Raw[]) rows.push({ ...toDeliveryRow(r), problem: state });
      }
      return rows.sort((a, b) => b.updatedAt - a.updatedAt || b.id - a.id).slice(0, limit);
    },
    /** Ids of dead deliveries, of one client or all, oldest first (so a retry of all keeps their order). */
    deadIds(clientId: string | null, limit: number): number[] {
      return (deadIds.all(clientId, limit) as Array<{ id: number }>).map((r) => r.id);
    },
    countByState(): Record<DeliveryState, number> {
      const out: Record<DeliveryState, number> = { pending: 0, sent: 0, dead: 0, cancelled: 0 };
      for (const r of counts.all() as Array<{ state: DeliveryState; n: number }>) out[r.state] = r.n;
      return out;
    },
  };
}

export type DeliveryQueries = ReturnType<typeof deliveryQueries>;
