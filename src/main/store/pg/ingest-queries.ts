import type { IngestStore } from '../contract.ts';
import { toConversationRow, type ConversationRow, type NewConversation, type RawConversation } from '../conversations.ts';
import type { AcceptedRequest, StoredResponse } from '../idempotency.ts';
import type { NewMessage, NewReply } from '../messages.ts';
import type { LoggedRequest } from '../request-log.ts';
import { shownInfoText } from '../shown-compute.ts';
import type { AutoReplyState, Channel } from '../../../shared/conversation.ts';
import type { NeedsHumanReason } from '../../../shared/console-api.ts';
import type { PgQueryable } from './pool.ts';

/**
 * The ingest commands' part of the store (IngestStore) on PostgreSQL: the same functions, the same
 * results as the SQLite store's, each a query on the connection of the caller's transaction.
 * Where two nodes may race, the database decides: a conversation's key and an idempotency key are
 * unique, so the loser of a race waits on the winner's row and then sees it (conversations) or
 * fails with unique_violation, and its command runs again and finds the winner's response
 * (pg-writer.ts).
 */
export function pgIngestStore(db: PgQueryable): IngestStore {
  const one = async <T>(text: string, values: unknown[]): Promise<T | undefined> => (await db.query(text, values)).rows[0] as T | undefined;
  const changed = async (text: string, values: unknown[]): Promise<number> => (await db.query(text, values)).rowCount ?? 0;
  const conversation = async (text: string, values: unknown[]): Promise<ConversationRow | undefined> => {
    const r = await one<RawConversation>(text, values);
    return r && toConversationRow(r);
  };
  const byKey = (clientId: string, channel: Channel, peer: string): Promise<ConversationRow | undefined> =>
    conversation('SELECT * FROM conversations WHERE client_id = $1 AND channel = $2 AND peer = $3', [clientId, channel, peer]);
  return {
    idempotency: {
      async get(clientId: string, eventType: string, msgId: string): Promise<StoredResponse | undefined> {
        const r = await one<{ content_hash: string; status: number; response: string; conversation_id: string }>(
          'SELECT content_hash, status, response, conversation_id FROM idempotency WHERE client_id = $1 AND event_type = $2 AND msg_id = $3',
          [clientId, eventType, msgId],
        );
        return r && { contentHash: r.content_hash, status: r.status, body: r.response, conversationId: r.conversation_id };
      },
      async put(a: AcceptedRequest): Promise<void> {
        await db.query(
          `INSERT INTO idempotency (client_id, event_type, msg_id, content_hash, status, response, conversation_id, message_id, signature, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
          [a.clientId, a.eventType, a.msgId, a.contentHash, a.status, a.body, a.conversationId, a.messageId, a.signature, a.at],
        );
      },
    },
    conversations: {
      byKey,
      byId: (id: string) => conversation('SELECT * FROM conversations WHERE id = $1', [id]),
      /**
       * As SQLite's, but a conversation another node created for the same key meanwhile is the
       * one returned: the key is unique, so this insert waits for that node's transaction, then
       * does nothing, and the row it made is read.
       */
      async create(c: NewConversation): Promise<ConversationRow> {
        const made = await conversation(
          `INSERT INTO conversations (id, client_id, channel, peer, group_id, customer_id, auto_reply, created_at, last_message_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT (client_id, channel, peer) DO NOTHING RETURNING *`,
          [c.id, c.clientId, c.channel, c.peer, c.groupId, c.customerId, c.autoReply, c.now],
        );
        const row = made ?? (await byKey(c.clientId, c.channel, c.peer));
        if (!row) throw new Error(`conversation ${c.clientId}/${c.channel}/${c.peer} neither created nor found`);
        return row;
      },
      async setAutoReply(id: string, state: AutoReplyState, pausedUntil: number | null): Promise<void> {
        await db.query('UPDATE conversations SET auto_reply = $1, paused_until = $2 WHERE id = $3', [state, pausedUntil, id]);
      },
      flagNeedsHuman: async (id: string, now: number, reason: NeedsHumanReason) =>
        (await changed('UPDATE conversations SET needs_human = 1, needs_human_since = $1, needs_human_reason = $2 WHERE id = $3 AND needs_human = 0', [now, reason, id])) > 0,
      clearNeedsHuman: async (id: string) => (await changed('UPDATE conversations SET needs_human = 0, needs_human_since = NULL WHERE id = $1 AND needs_human = 1', [id])) > 0,
      async touch(id: string, added: number, at: number): Promise<void> {
        await db.query('UPDATE conversations SET message_count = message_count + $1, last_message_at = greatest(last_message_at, $2) WHERE id = $3', [added, at, id]);
      },
      async touchCustomer(id: string, at: number, customerName: string | null = null, groupName: string | null = null): Promise<void> {
        await db.query(
          `UPDATE conversations SET message_count = message_count + 1, last_message_at = greatest(last_message_at, $1), unread = unread + 1,
             customer_name = coalesce($2, customer_name), group_name = coalesce($3, group_name) WHERE id = $4`,
          [at, customerName, groupName, id],
        );
      },
      async rename(id: string, customerName: string | null, groupName: string | null): Promise<void> {
        await db.query('UPDATE conversations SET customer_name = coalesce($1, customer_name), group_name = coalesce($2, group_name) WHERE id = $3', [customerName, groupName, id]);
      },
    },
    messages: {
      async insert(m: NewMessage): Promise<number> {
        const r = await one<{ id: number }>(
          `INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, from_user_id, from_user_type, content,
             message_info, create_timestamp, received_at, reply_scheduled, reply_reason, reply_outcome, shown)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING id`,
          [
            m.conversationId, m.clientId, m.eventType, m.msgId, m.role, m.fromUserId, m.fromUserType, m.content, m.messageInfo,
            m.createTimestamp, m.receivedAt, m.replyScheduled === null ? null : m.replyScheduled ? 1 : 0, m.replyReason,
            m.replyScheduled ? 'pending' : null, shownInfoText(m.messageInfo, m.role),
          ],
        );
        return r!.id;
      },
      async insertReply(r: NewReply): Promise<number> {
        const row = await one<{ id: number }>(
          `INSERT INTO replies (conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, confidence,
             sources, cause, operator, instruction, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id`,
          [
            r.conversationId, r.kind, r.msgId, JSON.stringify(r.replyTo), r.afterMessageId, r.content, r.handoff ? 1 : 0, r.engine, r.confidence,
            JSON.stringify(r.sources), r.cause ?? null, r.operator ? JSON.stringify({ id: r.operator.id, name: r.operator.name }) : null, r.instruction ?? null, r.createdAt,
          ],
        );
        return row!.id;
      },
      isOurReply: async (clientId: string, msgId: string) =>
        (await one(
          "SELECT 1 FROM replies r JOIN conversations c ON c.id = r.conversation_id WHERE r.msg_id = $1 AND c.client_id = $2 AND r.kind <> 'suggestion'",
          [msgId, clientId],
        )) !== undefined,
      countAutoRepliesSince: async (conversationId: string, since: number) =>
        Number((await one<{ n: string }>("SELECT count(*) AS n FROM replies WHERE conversation_id = $1 AND kind = 'auto' AND created_at >= $2", [conversationId, since]))!.n),
      async cancelPendingReplies(conversationId: string, note: string): Promise<number[]> {
        const r = await db.query(
          "UPDATE messages SET reply_outcome = 'cancelled', reply_note = $1 WHERE conversation_id = $2 AND reply_outcome = 'pending' RETURNING id",
          [note, conversationId],
        );
        return (r.rows as Array<{ id: number }>).map((x) => x.id).sort((a, b) => a - b);
      },
    },
    deliveries: {
      cancelForConversation: (conversationId: string, reason: string, now: number) =>
        changed("UPDATE deliveries SET state = 'cancelled', last_error = $1, updated_at = $2 WHERE conversation_id = $3 AND state = 'pending' AND kind = 'auto'", [
          reason,
          now,
          conversationId,
        ]),
    },
    people: {
      async remember(clientId: string, userId: string, nickname: string, at: number): Promise<void> {
        // A repeat of the stored name writes nothing: most messages carry the name they carried before.
        await db.query(
          `INSERT INTO people (client_id, user_id, nickname, updated_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (client_id, user_id) DO UPDATE SET nickname = excluded.nickname, updated_at = excluded.updated_at
           WHERE people.nickname IS DISTINCT FROM excluded.nickname`,
          [clientId, userId, nickname, at],
        );
      },
    },
    workspace: {
      async heldByConsole(conversationId: string, state: 'stopped' | 'paused'): Promise<boolean> {
        const r = (await one<{ stop_source: string | null; staff_at: number | null; operator_at: number | null }>(
          `SELECT (SELECT message_info::jsonb ->> 'source' FROM messages
                    WHERE conversation_id = $1 AND role = 'command' AND content = 'stop_auto_reply' ORDER BY id DESC LIMIT 1) AS stop_source,
                  (SELECT max(received_at) FROM messages WHERE conversation_id = $1 AND role = 'staff') AS staff_at,
                  (SELECT max(created_at) FROM replies WHERE conversation_id = $1 AND kind = 'operator') AS operator_at`,
          [conversationId],
        ))!;
        if (state === 'stopped') return r.stop_source === 'console';
        return r.operator_at !== null && (r.staff_at === null || r.operator_at >= r.staff_at);
      },
    },
    requestLog: {
      async insert(e: LoggedRequest, aggKey: string | null = null): Promise<void> {
        await db.query(
          `INSERT INTO request_log (at, request_id, method, path, client_id, claimed_client, verified, event_type, msg_id, conversation_id,
             status, code, latency_ms, replayed, problem, remote, agg_key)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
          [
            e.at, e.requestId, e.method, e.path, e.verified ? e.clientId : null, e.verified ? null : e.clientId, e.verified ? 1 : 0, e.eventType, e.msgId,
            e.conversationId, e.status, e.code, e.latencyMs, e.replayed ? 1 : 0, e.problem, e.remote, aggKey,
          ],
        );
      },
      async addToAggregate(aggKey: string, count: number, lastAt: number, close: boolean): Promise<void> {
        if (count > 0) await db.query('UPDATE request_log SET count = count + $1, last_at = greatest(coalesce(last_at, at), $2) WHERE agg_key = $3', [count, lastAt, aggKey]);
        if (close) await db.query('UPDATE request_log SET agg_key = NULL WHERE agg_key = $1', [aggKey]);
      },
    },
  };
}
