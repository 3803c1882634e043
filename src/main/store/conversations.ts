import type { Db } from './db.ts';
import type { AutoReplyState, Channel } from '../../shared/conversation.ts';
import { NEEDS_HUMAN_REASONS, type ConversationLabel, type ConversationSummary, type NeedsHumanReason } from '../../shared/console-api.ts';

/** A conversation as stored; the console's ConversationSummary adds the last line of text. */
export type ConversationRow = Omit<ConversationSummary, 'lastText'> & { createdAt: number };

export interface RawConversation {
  id: string;
  client_id: string;
  channel: Channel;
  peer: string;
  group_id: string | null;
  customer_id: string | null;
  auto_reply: AutoReplyState;
  paused_until: number | null;
  needs_human: number;
  message_count: number;
  created_at: number;
  last_message_at: number;
  customer_name: string | null;
  group_name?: string | null;
  unread: number;
  needs_human_since: number | null;
  needs_human_reason?: string | null;
  resolved_at: number | null;
  resolved_by: string | null;
  /** Absent on rows read from a store before migration 028, and in fixtures. */
  assignee?: string | null;
}

const isReason = (v: unknown): v is NeedsHumanReason => (NEEDS_HUMAN_REASONS as readonly unknown[]).includes(v);
/** The column's CHECK holds these; a row read from an older schema or a fixture has none. */
const reasonOf = (v: string | null | undefined): NeedsHumanReason | null => (isReason(v) ? v : null);

export function toConversationRow(r: RawConversation): ConversationRow {
  return {
    id: r.id,
    clientId: r.client_id,
    channel: r.channel,
    peer: r.peer,
    groupId: r.group_id,
    customerId: r.customer_id,
    autoReply: r.auto_reply,
    pausedUntil: r.paused_until,
    needsHuman: r.needs_human === 1,
    messageCount: r.message_count,
    createdAt: r.created_at,
    lastMessageAt: r.last_message_at,
    customerName: r.customer_name,
    groupName: r.group_name ?? null,
    unread: r.unread,
    needsHumanSince: r.needs_human_since,
    needsHumanReason: reasonOf(r.needs_human_reason),
    resolvedAt: r.resolved_at,
    resolvedBy: r.resolved_by,
    assignee: r.assignee ?? null,
  };
}

export interface NewConversation {
  id: string;
  clientId: string;
  channel: Channel;
  peer: string;
  groupId: string | null;
  customerId: string | null;
  autoReply: AutoReplyState;
  now: number;
}

export function conversationQueries(db: Db) {
  const byKey = db.prepare('SELECT * FROM conversations WHERE client_id = ? AND channel = ? AND peer = ?');
  const byId = db.prepare('SELECT * FROM conversations WHERE id = ?');
  const insert = db.prepare(
    `INSERT INTO conversations (id, client_id, channel, peer, group_id, customer_id, auto_reply, created_at, last_message_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const setState = db.prepare('UPDATE conversations SET auto_reply = ?, paused_until = ? WHERE id = ?');
  // Only a change of the flag writes: "newly needs a human" is what raises an alert, once.
  const flagNeedsHuman = db.prepare('UPDATE conversations SET needs_human = 1, needs_human_since = ?, needs_human_reason = ? WHERE id = ? AND needs_human = 0');
  const clearNeedsHuman = db.prepare('UPDATE conversations SET needs_human = 0, needs_human_since = NULL WHERE id = ? AND needs_human = 1');
  const clearWaitingSince = db.prepare(
    "UPDATE conversations SET needs_human = 0, needs_human_since = NULL WHERE id = ? AND needs_human = 1 AND needs_human_reason = 'customer_waiting' AND needs_human_since >= ?",
  );
  const resolve = db.prepare('UPDATE conversations SET needs_human = 0, needs_human_since = NULL, resolved_at = ?, resolved_by = ? WHERE id = ?');
  // Only while it is still out of Needs you: a flag set meanwhile keeps its own time.
  const unresolve = db.prepare('UPDATE conversations SET needs_human = 1, needs_human_since = ?, resolved_at = ?, resolved_by = ? WHERE id = ? AND needs_human = 0');
  const touch = db.prepare(
    'UPDATE conversations SET message_count = message_count + ?, last_message_at = max(last_message_at, ?) WHERE id = ?',
  );
  const touchCustomer = db.prepare(
    `UPDATE conversations SET message_count = message_count + 1, last_message_at = max(last_message_at, ?), unread = unread + 1,
       customer_name = coalesce(?, customer_name), group_name = coalesce(?, group_name) WHERE id = ?`,
  );
  const labels = db.prepare(
    'SELECT id, peer, group_id, group_name, customer_id, customer_name FROM conversations WHERE id IN (SELECT value FROM json_each(?))',
  );
  const rename = db.prepare('UPDATE conversations SET customer_name = coalesce(?, customer_name), group_name = coalesce(?, group_name) WHERE id = ?');
  const readUpTo = db.prepare('UPDATE conversations SET last_read_message_id = max(last_read_message_id, ?) WHERE id = ?');
  // Bounded by the conversation's unread messages, and run only when the operator reads.
  const recount = db.prepare(
    `UPDATE conversations SET unread = (SELECT count(*) FROM messages m WHERE m.conversation_id = conversations.id
       AND m.id > conversations.last_read_message_id AND m.role = 'customer') WHERE id = ? RETURNING unread`,
  );

  return {
    byKey(clientId: string, channel: Channel, peer: string): ConversationRow | undefined {
      const r = byKey.get(clientId, channel, peer) as RawConversation | undefined;
      return r && toConversationRow(r);
    },
    byId(id: string): ConversationRow | undefined {
      const r = byId.get(id) as RawConversation | undefined;
      return r && toConversationRow(r);
    },
    create(c: NewConversation): ConversationRow {
      insert.run(c.id, c.clientId, c.channel, c.peer, c.groupId, c.customerId, c.autoReply, c.now, c.now);
      return {
        id: c.id,
        clientId: c.clientId,
        channel: c.channel,
        peer: c.peer,
        groupId: c.groupId,
        customerId: c.customerId,
        autoReply: c.autoReply,
        pausedUntil: null,
        needsHuman: false,
        messageCount: 0,
        createdAt: c.now,
        lastMessageAt: c.now,
        customerName: null,
        groupName: null,
        unread: 0,
        needsHumanSince: null,
        needsHumanReason: null,
        resolvedAt: null,
        resolvedBy: null,
        assignee: null,
      };
    },
    setAutoReply(id: string, state: AutoReplyState, pausedUntil: number | null): void {
      setState.run(state, pausedUntil, id);
    },
    /**
     * Into Needs you, with why; true when it was not there before (the cue for one alert). One
     * already there keeps its wait and its first reason.
     */
    flagNeedsHuman(id: string, now: number, reason: NeedsHumanReason): boolean {
      return flagNeedsHuman.run(now, reason, id).changes > 0;
    },
    /** A human answered or took over; true when the flag was set. */
    clearNeedsHuman(id: string): boolean {
      return clearNeedsHuman.run(id).changes > 0;
    },
    /** Out of Needs you only if a customer writing while held off put it there since `since` (an undone stop). */
    clearWaitingSince(id: string, since: number): boolean {
      return clearWaitingSince.run(id, since).changes > 0;
    },
    /** Clears the flag and records who resolved the conversation, and when. */
    resolve(id: string, now: number, by: string): boolean {
      return resolve.run(now, by, id).changes > 0;
    },
    /**
     * Undo of a Resolve: flagged again with the wait it had (its place in Needs you, which is
     * ordered by needs_human_since), and the resolve before it; true when it was out of Needs you.
     */
    unresolve(id: string, needsHumanSince: number, resolvedAt: number | null, resolvedBy: string | null): boolean {
      return unresolve.run(needsHumanSince, resolvedAt, resolvedBy, id).changes > 0;
    },
    /** Counts entries appended to the transcript and moves the conversation up the list. */
    touch(id: string, added: number, at: number): void {
      touch.run(added, at, id);
    },
    /** A customer message was appended: one more unread, and the names it brought (null keeps the stored one). */
    touchCustomer(id: string, at: number, customerName: string | null = null, groupName: string | null = null): void {
      touchCustomer.run(at, customerName, groupName, id);
    },
    /** The list names a conversation from its row alone: the customer's and the group's latest names (null keeps the stored one). */
    rename(id: string, customerName: string | null, groupName: string | null): void {
      rename.run(customerName, groupName, id);
    },
    /** How the console names each of these conversations (unknown ids are absent). */
    labels(ids: readonly string[]): Record<string, ConversationLabel> {
      if (ids.length === 0) return {};
      const rows = labels.all(JSON.stringify([...new Set(ids)])) as Array<Pick<RawConversation, 'id' | 'peer' | 'group_id' | 'group_name' | 'customer_id' | 'customer_name'>>;
      return Object.fromEntries(
        rows.map((r) => [r.id, { peer: r.peer, groupId: r.group_id, groupName: r.group_name ?? null, customerId: r.customer_id, customerName: r.customer_name }]),
      );
    },
    /** The operator has seen messages up to `upToId`; returns what is still unread. */
    markRead(id: string, upToId: number): number | undefined {
      if (readUpTo.run(upToId, id).changes === 0) return undefined;
      return (recount.get(id) as { unread: number }).unread;
    },
  };
}

export type ConversationQueries = ReturnType<typeof conversationQueries>;
