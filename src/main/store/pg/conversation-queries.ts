import { z } from 'zod';
import type { StoreContract } from '../contract.ts';
import { toConversationRow, type ConversationRow, type NewConversation } from '../conversations.ts';
import { AUTO_REPLY_STATES, CHANNELS, type AutoReplyState, type Channel } from '../../../shared/conversation.ts';
import type { ConversationLabel, NeedsHumanReason } from '../../../shared/console-api.ts';
import { int8, type PgQueryable } from './pool.ts';

/** A conversations row re-read: int8 columns as numbers whichever connection read them. */
const rawConversation = z.object({
  id: z.string(),
  client_id: z.string(),
  channel: z.enum(CHANNELS),
  peer: z.string(),
  group_id: z.string().nullable(),
  customer_id: z.string().nullable(),
  auto_reply: z.enum(AUTO_REPLY_STATES),
  paused_until: int8.nullable(),
  needs_human: z.number().int(),
  message_count: z.number().int(),
  created_at: int8,
  last_message_at: int8,
  customer_name: z.string().nullable(),
  group_name: z.string().nullable(),
  unread: z.number().int(),
  needs_human_since: int8.nullable(),
  needs_human_reason: z.string().nullable(),
  resolved_at: int8.nullable(),
  resolved_by: z.string().nullable(),
  assignee: z.string().nullable(),
});

const labelRow = z.object({
  id: z.string(),
  peer: z.string(),
  group_id: z.string().nullable(),
  group_name: z.string().nullable(),
  customer_id: z.string().nullable(),
  customer_name: z.string().nullable(),
});

/** One conversation row as SQLite's toConversationRow makes it (undefined: no row). */
export function pgConversationRow(raw: unknown): ConversationRow | undefined {
  return raw === undefined ? undefined : toConversationRow(rawConversation.parse(raw));
}

/**
 * conversations.ts on PostgreSQL: the same functions and results. Every write is one conditional
 * statement (the flag changes only when it was not set, and so on), so two nodes writing at once
 * see one of them win, as SQLite's single writer gives.
 */
export function pgConversationQueries(db: PgQueryable): StoreContract['conversations'] {
  const conversation = async (text: string, values: unknown[]): Promise<ConversationRow | undefined> => pgConversationRow((await db.query(text, values)).rows[0]);
  const changed = async (text: string, values: unknown[]): Promise<boolean> => ((await db.query(text, values)).rowCount ?? 0) > 0;
  const byKey = (clientId: string, channel: Channel, peer: string): Promise<ConversationRow | undefined> =>
    conversation('SELECT * FROM conversations WHERE client_id = $1 AND channel = $2 AND peer = $3', [clientId, channel, peer]);
  return {
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
    flagNeedsHuman: (id: string, now: number, reason: NeedsHumanReason) =>
      changed('UPDATE conversations SET needs_human = 1, needs_human_since = $1, needs_human_reason = $2 WHERE id = $3 AND needs_human = 0', [now, reason, id]),
    /**
     * Two statements, as markRead: the first takes the row's lock, waiting for a transaction that
     * is flagging the conversation (a staff-wait check holds the lock from its first read), and the
     * conditional update, a statement of its own, then reads that flag (READ COMMITTED). One
     * statement would read the flag from before the wait, find nothing to clear, and leave a
     * conversation staff just answered in the IM in Needs you.
     */
    async clearNeedsHuman(id: string): Promise<boolean> {
      await db.query('SELECT 1 FROM conversations WHERE id = $1 FOR NO KEY UPDATE', [id]);
      return changed('UPDATE conversations SET needs_human = 0, needs_human_since = NULL WHERE id = $1 AND needs_human = 1', [id]);
    },
    clearWaitingSince: (id: string, since: number) =>
      changed(
        "UPDATE conversations SET needs_human = 0, needs_human_since = NULL WHERE id = $1 AND needs_human = 1 AND needs_human_reason = 'customer_waiting' AND needs_human_since >= $2",
        [id, since],
      ),
    resolve: (id: string, now: number, by: string) =>
      changed('UPDATE conversations SET needs_human = 0, needs_human_since = NULL, resolved_at = $1, resolved_by = $2 WHERE id = $3', [now, by, id]),
    unresolve: (id: string, needsHumanSince: number, resolvedAt: number | null, resolvedBy: string | null) =>
      changed('UPDATE conversations SET needs_human = 1, needs_human_since = $1, resolved_at = $2, resolved_by = $3 WHERE id = $4 AND needs_human = 0', [
        needsHumanSince,
        resolvedAt,
        resolvedBy,
        id,
      ]),
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
    async labels(ids: readonly string[]): Promise<Record<string, ConversationLabel>> {
      if (ids.length === 0) return {};
      const r = await db.query('SELECT id, peer, group_id, group_name, customer_id, customer_name FROM conversations WHERE id = ANY ($1::text[])', [[...new Set(ids)]]);
      return Object.fromEntries(
        r.rows.map((raw) => {
          const x = labelRow.parse(raw);
          return [x.id, { peer: x.peer, groupId: x.group_id, groupName: x.group_name, customerId: x.customer_id, customerName: x.customer_name }];
        }),
      );
    },
    /**
     * Two statements, as SQLite's: the first takes the row's lock (waiting for an ingest
     * transaction that is adding a customer message and its unread), and the recount, a statement
     * of its own, reads a fresh snapshot (READ COMMITTED) that holds that message. One statement
     * would count with the snapshot from before the wait and leave unread one short.
     */
    async markRead(id: string, upToId: number): Promise<number | undefined> {
      if (!(await changed('UPDATE conversations SET last_read_message_id = greatest(last_read_message_id, $1) WHERE id = $2', [upToId, id]))) return undefined;
      const r = await db.query(
        `UPDATE conversations SET unread = (SELECT count(*) FROM messages m WHERE m.conversation_id = conversations.id
           AND m.id > conversations.last_read_message_id AND m.role = 'customer') WHERE id = $1 RETURNING unread`,
        [id],
      );
      return z.number().int().parse((r.rows[0] as { unread: unknown }).unread);
    },
  };
}
