import type { ReplyStore } from '../contract.ts';
import type { DeliveryRow, DeliveryKind } from '../deliveries.ts';
import { originOf } from '../delivery-lanes.ts';
import { pgConversationQueries } from './conversation-queries.ts';
import { int8 } from './leases/lease.ts';
import { pgMessageQueries } from './message-queries.ts';
import type { PgQueryable } from './pool.ts';

type NewDelivery = Omit<DeliveryRow, 'id' | 'kind' | 'origin' | 'attempts' | 'roundAttempts' | 'lastStatus' | 'lastError' | 'updatedAt'> & { kind?: DeliveryKind };

/**
 * The auto reply's part of the store (ReplyStore) on PostgreSQL: the same functions and results
 * as the SQLite store's, on the connection of the caller's transaction. The conversations' and
 * messages' functions are their groups' own (conversation-queries.ts, message-queries.ts).
 */
export function pgReplyStore(db: PgQueryable): ReplyStore {
  const conversations = pgConversationQueries(db);
  const messages = pgMessageQueries(db);
  return {
    conversations: { byId: conversations.byId, flagNeedsHuman: conversations.flagNeedsHuman, touch: conversations.touch },
    messages: {
      insertReply: messages.insertReply,
      settleReply: messages.settleReply,
      pendingReplies: messages.pendingReplies,
      autoReplyTimesSince: messages.autoReplyTimesSince,
      context: messages.context,
    },
    deliveries: {
      async insert(d: NewDelivery): Promise<number> {
        const r = await db.query(
          `INSERT INTO deliveries (reply_id, reply_msg_id, conversation_id, client_id, send_url, message_info, state, next_attempt_at, created_at, updated_at, kind, origin)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10, $11) RETURNING id`,
          [d.replyId, d.replyMsgId, d.conversationId, d.clientId, d.sendUrl, d.messageInfo, d.state, d.nextAttemptAt, d.createdAt, d.kind ?? 'auto', originOf(d.sendUrl)],
        );
        return int8.parse((r.rows[0] as { id: unknown }).id);
      },
    },
  };
}

/**
 * What the ingest transaction needs to set a conversation's reply timer (reply-scheduler.ts's
 * arm): when its oldest still-pending customer message arrived, and the id of the message just
 * stored under (client, msg_id). Both read in the caller's transaction, which sees its own insert.
 */
export async function pendingSpan(db: PgQueryable, conversationId: string, clientId: string, msgId: string): Promise<{ firstAt: number; messageId: number } | undefined> {
  const r = (
    await db.query(
      `SELECT (SELECT min(received_at) FROM messages WHERE conversation_id = $1 AND reply_outcome = 'pending') AS first_at,
              (SELECT message_id FROM idempotency WHERE client_id = $2 AND event_type = 'auto_dialog' AND msg_id = $3) AS message_id`,
      [conversationId, clientId, msgId],
    )
  ).rows[0] as { first_at: unknown; message_id: unknown };
  if (r.first_at === null || r.message_id === null) return undefined;
  return { firstAt: int8.parse(r.first_at), messageId: int8.parse(r.message_id) };
}

/** The earliest due time of a reply timer nobody holds (null: none): when a worker should look next. */
export async function nextReplyDueAt(db: PgQueryable): Promise<number | null> {
  const r = (await db.query('SELECT min(due_at) AS at FROM due_replies WHERE lease_holder IS NULL')).rows[0] as { at: unknown };
  return r.at === null ? null : int8.parse(r.at);
}

/**
 * Takes the conversation row's lock, as an ingest command's update of the row does, before the
 * reply's transaction touches the conversation's timer: both then lock the row first and the timer
 * second, and wait on each other instead of deadlocking (a reply ending the timer while a newer
 * message moves it).
 */
export async function lockConversation(db: PgQueryable, conversationId: string): Promise<void> {
  await db.query('SELECT 1 FROM conversations WHERE id = $1 FOR NO KEY UPDATE', [conversationId]);
}

/**
 * A timer for every conversation with customer messages still waiting for their auto reply and
 * none set (a database moved in by `store copy`, which leaves due_replies empty), due now: as
 * SQLite's scheduler re-arms its timers at start, a message whose quiet period ran out while no
 * node ran is answered at once, or settled stale by the reply rules. Run by every node at start;
 * a timer already set is left as it is. Returns how many it set.
 */
export async function restoreDueReplies(db: PgQueryable, now: number): Promise<number> {
  const r = await db.query(
    `INSERT INTO due_replies (conversation_id, due_at, last_message_id)
     SELECT conversation_id, $1, max(id) FROM messages WHERE reply_outcome = 'pending' GROUP BY conversation_id
     ON CONFLICT (conversation_id) DO NOTHING`,
    [now],
  );
  return r.rowCount ?? 0;
}
