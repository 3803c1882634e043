import type { IngestStore } from '../contract.ts';
import type { LoggedRequest } from '../request-log.ts';
import { pgConversationQueries } from './conversation-queries.ts';
import { pgIdempotencyQueries } from './idempotency-queries.ts';
import { pgMessageQueries } from './message-queries.ts';
import type { PgQueryable } from './pool.ts';
import { pgWorkspaceQueries } from './workspace-queries.ts';

/**
 * The ingest commands' part of the store (IngestStore) on PostgreSQL: the same functions, the same
 * results as the SQLite store's, each a query on the connection of the caller's transaction. The
 * conversations, messages, idempotency and workspace functions are their groups' own
 * (conversation-queries.ts and its neighbours), picked here. Where two nodes may race, the
 * database decides: a conversation's key and an idempotency key are unique, so the loser of a race
 * waits on the winner's row and then sees it (conversations) or fails with unique_violation, and
 * its command runs again and finds the winner's response (pg-ingest-runner.ts).
 */
export function pgIngestStore(db: PgQueryable): IngestStore {
  const changed = async (text: string, values: unknown[]): Promise<number> => (await db.query(text, values)).rowCount ?? 0;
  const idempotency = pgIdempotencyQueries(db);
  const conversations = pgConversationQueries(db);
  const messages = pgMessageQueries(db);
  return {
    idempotency: { get: idempotency.get, put: idempotency.put },
    conversations: {
      byKey: conversations.byKey,
      byId: conversations.byId,
      create: conversations.create,
      setAutoReply: conversations.setAutoReply,
      flagNeedsHuman: conversations.flagNeedsHuman,
      clearNeedsHuman: conversations.clearNeedsHuman,
      touch: conversations.touch,
      touchCustomer: conversations.touchCustomer,
      rename: conversations.rename,
    },
    messages: {
      insert: messages.insert,
      insertReply: messages.insertReply,
      isOurReply: messages.isOurReply,
      countAutoRepliesSince: messages.countAutoRepliesSince,
      cancelPendingReplies: messages.cancelPendingReplies,
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
    workspace: { heldByConsole: pgWorkspaceQueries(db).heldByConsole },
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
