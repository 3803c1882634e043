import type { Db } from './db.ts';
import type { AutoReplyState, Channel } from '../../shared/conversation.ts';
import type { ConversationSummary } from '../../shared/console-api.ts';

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
}

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
  const setNeedsHuman = db.prepare('UPDATE conversations SET needs_human = ? WHERE id = ?');
  const touch = db.prepare(
    'UPDATE conversations SET message_count = message_count + ?, last_message_at = max(last_message_at, ?) WHERE id = ?',
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
      };
    },
    setAutoReply(id: string, state: AutoReplyState, pausedUntil: number | null): void {
      setState.run(state, pausedUntil, id);
    },
    setNeedsHuman(id: string, value: boolean): void {
      setNeedsHuman.run(value ? 1 : 0, id);
    },
    /** Counts entries appended to the transcript and moves the conversation up the list. */
    touch(id: string, added: number, at: number): void {
      touch.run(added, at, id);
    },
  };
}

export type ConversationQueries = ReturnType<typeof conversationQueries>;
