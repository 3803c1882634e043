import type { Db } from './db.ts';
import type { MessageRole, ReplyReason } from '../../shared/conversation.ts';
import type { EventType } from '../../shared/protocol/message-schema.ts';
import { messageContext } from './message-context.ts';
import { shownInfoSql } from './info-sql.ts';

export interface NewMessage {
  conversationId: string;
  clientId: string;
  eventType: EventType;
  msgId: string;
  role: MessageRole;
  fromUserId: string | null;
  fromUserType: number | null;
  content: string | null;
  /** The message_info exactly as received (unknown fields included). */
  messageInfo: string;
  createTimestamp: number | null;
  receivedAt: number;
  replyScheduled: boolean | null;
  replyReason: ReplyReason | null;
}

/** What became of a scheduled auto reply: the trace the console shows for each message. */
export type ReplyOutcome = 'pending' | 'answered' | 'handoff' | 'cancelled' | 'stale';

/** A customer message waiting for its auto reply. */
export interface PendingReply {
  id: number;
  conversationId: string;
  clientId: string;
  msgId: string;
  fromUserId: string | null;
  content: string;
  sendUrl: string | null;
  createTimestamp: number | null;
  receivedAt: number;
}

export type ReplyKind = 'auto' | 'website' | 'suggestion' | 'operator';

export interface NewReply {
  conversationId: string;
  kind: ReplyKind;
  msgId: string;
  replyTo: string[];
  afterMessageId: number;
  content: string;
  handoff: boolean;
  engine: string;
  confidence: number | null;
  sources: unknown[];
  /** Why the engine handed off or the reply was not sent, for the trace. */
  cause?: string | null;
  /** Operator replies: the console user who sent it. */
  operator?: { id: string; name: string } | null;
  /** Suggestions: what the agent asked for. */
  instruction?: string | null;
  createdAt: number;
}

/** A pending-reply row as both stores select it (store/pg/reply-queries.ts checks it with zod first). */
export interface PendingRow {
  id: number;
  conversation_id: string;
  client_id: string;
  msg_id: string;
  from_user_id: string | null;
  content: string | null;
  send_url: string | null;
  create_timestamp: number | null;
  received_at: number;
}

export const toPendingReply = (r: PendingRow): PendingReply => ({
  id: r.id,
  conversationId: r.conversation_id,
  clientId: r.client_id,
  msgId: r.msg_id,
  fromUserId: r.from_user_id,
  content: r.content ?? '',
  sendUrl: r.send_url,
  createTimestamp: r.create_timestamp,
  receivedAt: r.received_at,
});

export function messageQueries(db: Db) {
  // `shown` is computed from the bound message_info (?9) and role (?5): what the reads need of it.
  const insertMessage = db.prepare(
    `INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, from_user_id, from_user_type, content,
       message_info, create_timestamp, received_at, reply_scheduled, reply_reason, reply_outcome, shown)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ${shownInfoSql('?9', '?5')})`,
  );
  const insertReply = db.prepare(
    `INSERT INTO replies (conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, confidence,
       sources, cause, operator, instruction, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // Not through the idempotency table: its rows are pruned, an assist may name an older message.
  // Newest first: once a key's idempotency record is gone, a reused msg_id is stored again.
  const autoMessageByMsgId = db.prepare(
    `SELECT id, conversation_id FROM messages INDEXED BY messages_auto_msg_id
     WHERE client_id = ? AND msg_id = ? AND event_type = 'auto_dialog' ORDER BY id DESC LIMIT 1`,
  );
  const ourReply = db.prepare(
    "SELECT 1 AS found FROM replies r JOIN conversations c ON c.id = r.conversation_id WHERE r.msg_id = ? AND c.client_id = ? AND r.kind != 'suggestion'",
  );
  const infoById = db.prepare('SELECT message_info FROM messages WHERE id = ?');
  const storedById = db.prepare('SELECT conversation_id, message_info, octet_length(message_info) AS bytes FROM messages WHERE id = ?');
  const pendingSelect = `SELECT id, conversation_id, client_id, msg_id, from_user_id, content, json_extract(message_info, '$.send_url') AS send_url,
       create_timestamp, received_at FROM messages`;
  const pendingOf = db.prepare(`${pendingSelect} WHERE conversation_id = ? AND reply_outcome = 'pending' ORDER BY id`);
  // Named: left alone the planner walks every message in id order to skip the sort (1.36 s cold at 1M messages).
  const allPending = db.prepare(`${pendingSelect} INDEXED BY messages_pending_order WHERE reply_outcome = 'pending' ORDER BY id`);
  const setOutcome = db.prepare("UPDATE messages SET reply_outcome = ?, reply_msg_id = ?, reply_note = ? WHERE id = ? AND reply_outcome = 'pending'");
  const cancelPending = db.prepare(
    "UPDATE messages SET reply_outcome = 'cancelled', reply_note = ? WHERE conversation_id = ? AND reply_outcome = 'pending' RETURNING id",
  );
  // Customer lines left for a human only because a stop held the bot off, after that stop's line.
  const reviveStopped = db.prepare(
    `UPDATE messages SET reply_scheduled = 1, reply_reason = 'scheduled', reply_outcome = 'pending', reply_note = NULL
     WHERE conversation_id = ? AND id > ? AND role = 'customer' AND reply_scheduled = 0 AND reply_reason = 'auto_reply_stopped'
     RETURNING id, received_at`,
  );
  // Only what is still as that cancel left it: a message settled otherwise since keeps its fate.
  const restoreCancelled = db.prepare(
    `UPDATE messages SET reply_outcome = 'pending', reply_note = NULL
     WHERE id IN (SELECT value FROM json_each(?)) AND conversation_id = ? AND reply_outcome = 'cancelled' AND reply_note = ?
     RETURNING id, received_at`,
  );
  const trace = db.prepare('SELECT reply_scheduled, reply_reason, reply_outcome, reply_msg_id, reply_note FROM messages WHERE id = ?');
  const autoRepliesSince = db.prepare(
    "SELECT count(*) AS n FROM replies WHERE conversation_id = ? AND kind = 'auto' AND created_at >= ?",
  );
  const autoReplyTimes = db.prepare(
    "SELECT created_at FROM replies WHERE conversation_id = ? AND kind = 'auto' AND created_at >= ? ORDER BY created_at",
  );

  return {
    insert(m: NewMessage): number {
      const r = insertMessage.run(
        m.conversationId,
        m.clientId,
        m.eventType,
        m.msgId,
        m.role,
        m.fromUserId,
        m.fromUserType,
        m.content,
        m.messageInfo,
        m.createTimestamp,
        m.receivedAt,
        m.replyScheduled === null ? null : m.replyScheduled ? 1 : 0,
        m.replyReason,
        m.replyScheduled ? 'pending' : null,
      );
      return Number(r.lastInsertRowid);
    },
    insertReply(r: NewReply): number {
      const res = insertReply.run(
        r.conversationId,
        r.kind,
        r.msgId,
        JSON.stringify(r.replyTo),
        r.afterMessageId,
        r.content,
        r.handoff ? 1 : 0,
        r.engine,
        r.confidence,
        JSON.stringify(r.sources),
        r.cause ?? null,
        // Who, not where from: the caller's address stays in the audit.
        r.operator ? JSON.stringify({ id: r.operator.id, name: r.operator.name }) : null,
        r.instruction ?? null,
        r.createdAt,
      );
      return Number(res.lastInsertRowid);
    },
    findAutoMessage(clientId: string, msgId: string): { id: number; conversationId: string } | undefined {
      const r = autoMessageByMsgId.get(clientId, msgId) as { id: number; conversation_id: string } | undefined;
      return r && { id: r.id, conversationId: r.conversation_id };
    },
    context: messageContext(db),
    /** The message_info as it arrived, unknown fields included. */
    messageInfo(id: number): Record<string, unknown> | undefined {
      const r = infoById.get(id) as { message_info: string } | undefined;
      return r && (JSON.parse(r.message_info) as Record<string, unknown>);
    },
    /** The message_info text as stored, for the console's "whole message": never parsed here. */
    storedInfo(id: number): { conversationId: string; json: string; bytes: number } | undefined {
      const r = storedById.get(id) as { conversation_id: string; message_info: string; bytes: number } | undefined;
      return r && { conversationId: r.conversation_id, json: r.message_info, bytes: r.bytes };
    },
    pendingReplies(conversationId?: string): PendingReply[] {
      const rows = (conversationId === undefined ? allPending.all() : pendingOf.all(conversationId)) as unknown as PendingRow[];
      return rows.map(toPendingReply);
    },
    /** Settles a pending message; a message already settled keeps its first outcome. */
    settleReply(id: number, outcome: Exclude<ReplyOutcome, 'pending'>, replyMsgId: string | null, note: string | null): boolean {
      return setOutcome.run(outcome, replyMsgId, note, id).changes > 0;
    },
    /** Cancels the conversation's pending replies; returns the messages cancelled, by id. */
    cancelPendingReplies(conversationId: string, note: string): number[] {
      return (cancelPending.all(note, conversationId) as Array<{ id: number }>).map((r) => r.id).sort((a, b) => a - b);
    },
    /**
     * Puts messages a cancel with `note` settled back to pending, as they were before it (the note
     * of a pending message is null). Returns when each restored message arrived, oldest first.
     */
    restoreCancelledReplies(conversationId: string, messageIds: readonly number[], note: string): number[] {
      if (messageIds.length === 0) return [];
      const rows = restoreCancelled.all(JSON.stringify(messageIds), conversationId, note) as Array<{ id: number; received_at: number }>;
      return rows.sort((a, b) => a.id - b.id).map((r) => r.received_at);
    },
    /**
     * An undone stop: the customer messages that arrived while it held and were left unanswered
     * only for it are scheduled for a reply after all. Returns when each arrived, oldest first.
     */
    reviveStoppedSince(conversationId: string, afterMessageId: number): number[] {
      const rows = reviveStopped.all(conversationId, afterMessageId) as Array<{ id: number; received_at: number }>;
      return rows.sort((a, b) => a.id - b.id).map((r) => r.received_at);
    },
    replyTrace(id: number): { scheduled: boolean | null; reason: ReplyReason | null; outcome: ReplyOutcome | null; replyMsgId: string | null; note: string | null } | undefined {
      const r = trace.get(id) as
        | { reply_scheduled: number | null; reply_reason: ReplyReason | null; reply_outcome: ReplyOutcome | null; reply_msg_id: string | null; reply_note: string | null }
        | undefined;
      return (
        r && {
          scheduled: r.reply_scheduled === null ? null : r.reply_scheduled === 1,
          reason: r.reply_reason,
          outcome: r.reply_outcome,
          replyMsgId: r.reply_msg_id,
          note: r.reply_note,
        }
      );
    },
    isOurReply(clientId: string, msgId: string): boolean {
      return ourReply.get(msgId, clientId) !== undefined;
    },
    countAutoRepliesSince(conversationId: string, since: number): number {
      return (autoRepliesSince.get(conversationId, since) as { n: number }).n;
    },
    /** When each auto reply since `since` was made, oldest first: when the per-minute cap frees a slot. */
    autoReplyTimesSince(conversationId: string, since: number): number[] {
      return (autoReplyTimes.all(conversationId, since) as Array<{ created_at: number }>).map((r) => r.created_at);
    },
  };
}

export type MessageQueries = ReturnType<typeof messageQueries>;
