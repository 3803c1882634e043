import { z } from 'zod';
import type { StoreContract } from '../contract.ts';
import { toPendingReply, type NewMessage, type NewReply, type PendingReply, type ReplyOutcome } from '../messages.ts';
import { shownInfoText } from '../shown-compute.ts';
import { REPLY_REASONS } from '../../../shared/conversation.ts';
import { pgMessageContext } from './context-queries.ts';
import { pgMessageReads } from './message-reads.ts';
import { int8, type PgQueryable } from './pool.ts';

const PENDING_SELECT = `SELECT id, conversation_id, client_id, msg_id, from_user_id, content, message_info::jsonb ->> 'send_url' AS send_url,
  create_timestamp, received_at FROM messages`;
const PENDING_OF_SQL = `${PENDING_SELECT} WHERE conversation_id = $1 AND reply_outcome = 'pending' ORDER BY id`;
const ALL_PENDING_SQL = `${PENDING_SELECT} WHERE reply_outcome = 'pending' ORDER BY id`;

const pendingRow = z.object({
  id: int8,
  conversation_id: z.string(),
  client_id: z.string(),
  msg_id: z.string(),
  from_user_id: z.string().nullable(),
  content: z.string().nullable(),
  send_url: z.string().nullable(),
  create_timestamp: int8.nullable(),
  received_at: int8,
});

const idRow = z.object({ id: int8 });
const arrivedRow = z.object({ id: int8, received_at: int8 });
const traceRow = z.object({
  reply_scheduled: int8.nullable(),
  reply_reason: z.enum(REPLY_REASONS).nullable(),
  reply_outcome: z.enum(['pending', 'answered', 'handoff', 'cancelled', 'stale']).nullable(),
  reply_msg_id: z.string().nullable(),
  reply_note: z.string().nullable(),
});

/** When each returned message arrived, oldest (lowest id) first: what the undo of a stop re-arms its timer from. */
const arrivedInOrder = (rows: unknown[]): number[] =>
  rows
    .map((r) => arrivedRow.parse(r))
    .sort((a, b) => a.id - b.id)
    .map((r) => r.received_at);

/**
 * messages.ts on PostgreSQL: the same functions and results. Each write is one conditional
 * statement (a settle, a cancel, a restore only touches rows still in the state it expects), so
 * two nodes writing the same message at once leave it as one of them would alone.
 */
export function pgMessageQueries(db: PgQueryable): StoreContract['messages'] {
  const one = async (text: string, values: unknown[]): Promise<unknown> => (await db.query(text, values)).rows[0];
  return {
    async insert(m: NewMessage): Promise<number> {
      const r = await one(
        `INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, from_user_id, from_user_type, content,
           message_info, create_timestamp, received_at, reply_scheduled, reply_reason, reply_outcome, shown)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING id`,
        [
          m.conversationId, m.clientId, m.eventType, m.msgId, m.role, m.fromUserId, m.fromUserType, m.content, m.messageInfo,
          m.createTimestamp, m.receivedAt, m.replyScheduled === null ? null : m.replyScheduled ? 1 : 0, m.replyReason,
          m.replyScheduled ? 'pending' : null, shownInfoText(m.messageInfo, m.role),
        ],
      );
      return idRow.parse(r).id;
    },
    async insertReply(r: NewReply): Promise<number> {
      const row = await one(
        `INSERT INTO replies (conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, confidence,
           sources, cause, operator, instruction, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id`,
        [
          r.conversationId, r.kind, r.msgId, JSON.stringify(r.replyTo), r.afterMessageId, r.content, r.handoff ? 1 : 0, r.engine, r.confidence,
          JSON.stringify(r.sources), r.cause ?? null, r.operator ? JSON.stringify({ id: r.operator.id, name: r.operator.name }) : null, r.instruction ?? null, r.createdAt,
        ],
      );
      return idRow.parse(row).id;
    },
    findAutoMessage: pgMessageReads(db).messages.findAutoMessage,
    context: pgMessageContext(db),
    async messageInfo(id: number): Promise<Record<string, unknown> | undefined> {
      const r = (await one('SELECT message_info FROM messages WHERE id = $1', [id])) as { message_info: string } | undefined;
      return r && (JSON.parse(r.message_info) as Record<string, unknown>);
    },
    // octet_length of text is its UTF-8 bytes (the databases are UTF-8), as SQLite's octet_length.
    async storedInfo(id: number): Promise<{ conversationId: string; json: string; bytes: number } | undefined> {
      const r = await one('SELECT conversation_id, message_info, octet_length(message_info) AS bytes FROM messages WHERE id = $1', [id]);
      if (r === undefined) return undefined;
      const x = z.object({ conversation_id: z.string(), message_info: z.string(), bytes: z.number().int() }).parse(r);
      return { conversationId: x.conversation_id, json: x.message_info, bytes: x.bytes };
    },
    async pendingReplies(conversationId?: string): Promise<PendingReply[]> {
      const r = conversationId === undefined ? await db.query(ALL_PENDING_SQL) : await db.query(PENDING_OF_SQL, [conversationId]);
      return r.rows.map((row) => toPendingReply(pendingRow.parse(row)));
    },
    async settleReply(id: number, outcome: Exclude<ReplyOutcome, 'pending'>, replyMsgId: string | null, note: string | null): Promise<boolean> {
      const r = await db.query("UPDATE messages SET reply_outcome = $1, reply_msg_id = $2, reply_note = $3 WHERE id = $4 AND reply_outcome = 'pending'", [outcome, replyMsgId, note, id]);
      return (r.rowCount ?? 0) > 0;
    },
    async cancelPendingReplies(conversationId: string, note: string): Promise<number[]> {
      const r = await db.query("UPDATE messages SET reply_outcome = 'cancelled', reply_note = $1 WHERE conversation_id = $2 AND reply_outcome = 'pending' RETURNING id", [
        note,
        conversationId,
      ]);
      return r.rows.map((x) => idRow.parse(x).id).sort((a, b) => a - b);
    },
    /**
     * As SQLite's; the caller re-arms the conversation's reply timer from what it returns (on
     * PostgreSQL a due_replies row, scheduleReply), not this function.
     */
    async restoreCancelledReplies(conversationId: string, messageIds: readonly number[], note: string): Promise<number[]> {
      if (messageIds.length === 0) return [];
      const r = await db.query(
        `UPDATE messages SET reply_outcome = 'pending', reply_note = NULL
         WHERE id = ANY ($1::bigint[]) AND conversation_id = $2 AND reply_outcome = 'cancelled' AND reply_note = $3
         RETURNING id, received_at`,
        [[...messageIds], conversationId, note],
      );
      return arrivedInOrder(r.rows);
    },
    /** As restoreCancelledReplies: the caller sets the reply timer. */
    async reviveStoppedSince(conversationId: string, afterMessageId: number): Promise<number[]> {
      const r = await db.query(
        `UPDATE messages SET reply_scheduled = 1, reply_reason = 'scheduled', reply_outcome = 'pending', reply_note = NULL
         WHERE conversation_id = $1 AND id > $2 AND role = 'customer' AND reply_scheduled = 0 AND reply_reason = 'auto_reply_stopped'
         RETURNING id, received_at`,
        [conversationId, afterMessageId],
      );
      return arrivedInOrder(r.rows);
    },
    async replyTrace(id: number) {
      const raw = await one('SELECT reply_scheduled, reply_reason, reply_outcome, reply_msg_id, reply_note FROM messages WHERE id = $1', [id]);
      if (raw === undefined) return undefined;
      const r = traceRow.parse(raw);
      return {
        scheduled: r.reply_scheduled === null ? null : r.reply_scheduled === 1,
        reason: r.reply_reason,
        outcome: r.reply_outcome,
        replyMsgId: r.reply_msg_id,
        note: r.reply_note,
      };
    },
    isOurReply: async (clientId: string, msgId: string) =>
      (await one("SELECT 1 FROM replies r JOIN conversations c ON c.id = r.conversation_id WHERE r.msg_id = $1 AND c.client_id = $2 AND r.kind <> 'suggestion'", [
        msgId,
        clientId,
      ])) !== undefined,
    countAutoRepliesSince: async (conversationId: string, since: number) =>
      z.object({ n: int8 }).parse(await one("SELECT count(*) AS n FROM replies WHERE conversation_id = $1 AND kind = 'auto' AND created_at >= $2", [conversationId, since])).n,
    async autoReplyTimesSince(conversationId: string, since: number): Promise<number[]> {
      const r = await db.query("SELECT created_at FROM replies WHERE conversation_id = $1 AND kind = 'auto' AND created_at >= $2 ORDER BY created_at", [conversationId, since]);
      return r.rows.map((row) => int8.parse((row as { created_at: unknown }).created_at));
    },
  };
}
