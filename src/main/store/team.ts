import type { Db } from './db.ts';
import { ARRIVED_MAX, ARRIVED_TEXT_MAX, UNREAD_WINDOW, type ArrivedEntry, type DraftBase, type Operator } from '../../shared/console-api.ts';

/** Whose read marker a count is for, and from when an account counts (an agent: since their account was made; the owner: always). */
export interface Reader {
  id: string;
  floor: number;
}

/**
 * The caller's unread customer messages in conversation `c`, as a column: those after their read
 * marker among the newest UNREAD_WINDOW lines there (a bounded walk of the conversation's index),
 * received since their floor. Binds the reader's id, then the floor.
 */
export const UNREAD_FOR = `(SELECT count(*) FROM (SELECT m.role, m.received_at FROM messages m WHERE m.conversation_id = c.id
     AND m.id > coalesce((SELECT rm.last_read_message_id FROM read_markers rm WHERE rm.agent_id = ? AND rm.conversation_id = c.id), 0)
     ORDER BY m.id DESC LIMIT ${UNREAD_WINDOW}) u WHERE u.role = 'customer' AND u.received_at >= ?)`;

const clipText = (text: string): string => ([...text].length > ARRIVED_TEXT_MAX ? `${[...text].slice(0, ARRIVED_TEXT_MAX - 1).join('')}…` : text);

/**
 * Assignment, notes and per-account read markers (migration 028). Every change of an assignee that
 * must not race another writer (auto-assignment, a reply taking an unassigned conversation) is one
 * conditional UPDATE: SQLite runs it under the database's write lock, so two processes, or two
 * events in one, can never both win.
 */
export function teamQueries(db: Db) {
  const assigneeOf = db.prepare('SELECT assignee FROM conversations WHERE id = ?');
  const assign = db.prepare('UPDATE conversations SET assignee = ?, assigned_at = ? WHERE id = ?');
  const takeIfFree = db.prepare('UPDATE conversations SET assignee = ?, assigned_at = ? WHERE id = ? AND assignee IS NULL');
  // The claim re-checks everything the choice was made on, in the statement that writes it.
  const claim = db.prepare(
    `UPDATE conversations SET assignee = :agent, assigned_at = :now
     WHERE id = :id AND assignee IS NULL AND needs_human = 1
       AND (SELECT count(*) FROM conversations o WHERE o.assignee = :agent AND o.needs_human = 1) < :capacity`,
  );
  const returnAll = db.prepare('UPDATE conversations SET assignee = NULL, assigned_at = NULL WHERE assignee = ? AND needs_human = 1 RETURNING id');
  const openCounts = db.prepare('SELECT assignee, count(*) AS n FROM conversations WHERE needs_human = 1 AND assignee IS NOT NULL GROUP BY assignee');
  const waiting = db.prepare(
    'SELECT id FROM conversations INDEXED BY conversations_needs_human WHERE needs_human = 1 AND assignee IS NULL ORDER BY needs_human_since, id LIMIT ?',
  );
  const assignedWaiting = db.prepare('SELECT DISTINCT assignee FROM conversations WHERE needs_human = 1 AND assignee IS NOT NULL');
  const latestReplyId = db.prepare('SELECT coalesce(max(id), 0) AS id FROM replies WHERE conversation_id = ?');
  const insertNote = db.prepare(
    `INSERT INTO notes (conversation_id, msg_id, after_message_id, after_reply_id, author, content, mentions, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const markRead = db.prepare(
    `INSERT INTO read_markers (agent_id, conversation_id, last_read_message_id) VALUES (?, ?, ?)
     ON CONFLICT (agent_id, conversation_id) DO UPDATE SET last_read_message_id = max(last_read_message_id, excluded.last_read_message_id)`,
  );
  const unread = db.prepare(`SELECT ${UNREAD_FOR} AS n FROM conversations c WHERE c.id = ?`);
  const adoptShared = db.prepare(
    'INSERT OR IGNORE INTO read_markers (agent_id, conversation_id, last_read_message_id) SELECT ?, id, last_read_message_id FROM conversations WHERE last_read_message_id > 0',
  );
  const messagesAfter = db.prepare(
    `SELECT m.id, m.role, m.content, m.received_at, coalesce(p.nickname, m.from_user_id) AS who
     FROM messages m LEFT JOIN people p ON p.client_id = m.client_id AND p.user_id = m.from_user_id
     WHERE m.conversation_id = ? AND m.id > ? AND m.role IN ('customer', 'staff') ORDER BY m.id LIMIT ${ARRIVED_MAX}`,
  );
  // An operator reply is stored after the newest message there was: one made after the base is after its message.
  const repliesAfter = db.prepare(
    `SELECT id, content, created_at, json_extract(operator, '$.name') AS who FROM replies
     WHERE conversation_id = ? AND after_message_id >= ? AND id > ? AND kind = 'operator' AND json_extract(operator, '$.id') IS NOT ?
     ORDER BY id LIMIT ${ARRIVED_MAX}`,
  );

  return {
    assigneeOf(conversationId: string): string | null | undefined {
      const row = assigneeOf.get(conversationId) as { assignee: string | null } | undefined;
      return row ? row.assignee : undefined;
    },
    /** Sets (or clears, with null) the assignee by hand; false when there is no such conversation. */
    assign(conversationId: string, agentId: string | null, now: number): boolean {
      return assign.run(agentId, agentId === null ? null : now, conversationId).changes === 1;
    },
    /** Takes a conversation nobody has (a reply by an agent); false when someone has it. */
    takeIfFree(conversationId: string, agentId: string, now: number): boolean {
      return takeIfFree.run(agentId, now, conversationId).changes === 1;
    },
    /**
     * Auto-assignment's claim: only while it still needs a human, nobody has it and the agent has
     * fewer than `capacity` open conversations.
     */
    claim(conversationId: string, agentId: string, capacity: number, now: number): boolean {
      return claim.run({ agent: agentId, now, id: conversationId, capacity }).changes === 1;
    },
    /** An offline agent's conversations that still need a human go back to the queue; their ids. */
    returnToQueue(agentId: string): string[] {
      return (returnAll.all(agentId) as Array<{ id: string }>).map((r) => r.id);
    },
    /** Conversations needing a human, per assignee (capacity counts these). */
    openCounts(): Map<string, number> {
      return new Map((openCounts.all() as Array<{ assignee: string; n: number }>).map((r) => [r.assignee, r.n]));
    },
    /** Accounts that have a conversation still needing a human. */
    withOpen(): string[] {
      return (assignedWaiting.all() as Array<{ assignee: string }>).map((r) => r.assignee);
    },
    /** The queue: unassigned conversations that need a human, longest wait first. */
    waitingUnassigned(limit: number): string[] {
      return (waiting.all(limit) as Array<{ id: string }>).map((r) => r.id);
    },
    latestReplyId(conversationId: string): number {
      return (latestReplyId.get(conversationId) as { id: number }).id;
    },
    /**
     * What a customer, staff in the IM or another operator said after a draft's base: a reply or
     * note started before it must not go out unseen (the author's own replies do not count).
     */
    arrivedSince(conversationId: string, base: DraftBase, authorId: string): ArrivedEntry[] {
      const messages = (messagesAfter.all(conversationId, base.messageId) as Array<{ id: number; role: 'customer' | 'staff'; content: string | null; received_at: number; who: string | null }>).map(
        (m): ArrivedEntry => ({ id: m.id, kind: 'message', role: m.role, by: m.who, text: clipText(m.content ?? ''), at: m.received_at }),
      );
      const replies = (repliesAfter.all(conversationId, base.messageId, base.replyId, authorId) as Array<{ id: number; content: string; created_at: number; who: string | null }>).map(
        (r): ArrivedEntry => ({ id: r.id, kind: 'reply', role: 'staff', by: r.who, text: clipText(r.content), at: r.created_at }),
      );
      return [...messages, ...replies].sort((a, b) => a.at - b.at).slice(0, ARRIVED_MAX);
    },
    insertNote(n: { conversationId: string; msgId: string; afterMessageId: number; afterReplyId: number; author: Operator; content: string; mentions: string[]; now: number }): number {
      const r = insertNote.run(n.conversationId, n.msgId, n.afterMessageId, n.afterReplyId, JSON.stringify({ id: n.author.id, name: n.author.name }), n.content, JSON.stringify(n.mentions), n.now);
      return Number(r.lastInsertRowid);
    },
    /** The account has seen the conversation up to `upToId` (never moves back); what is still unread for them. */
    markRead(reader: Reader, conversationId: string, upToId: number): number {
      markRead.run(reader.id, conversationId, upToId);
      return this.unread(reader, conversationId);
    },
    unread(reader: Reader, conversationId: string): number {
      return (unread.get(reader.id, reader.floor, conversationId) as { n: number } | undefined)?.n ?? 0;
    },
    /** The owner named themselves for the first time: what their console had read (the shared marker) becomes theirs. */
    adoptSharedMarkers(agentId: string): void {
      adoptShared.run(agentId);
    },
  };
}

export type TeamQueries = ReturnType<typeof teamQueries>;
