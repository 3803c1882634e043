import type { Db } from './db.ts';
import type { MessageRole } from '../../shared/conversation.ts';
import type { ContextLine } from '../engines/engine.ts';
import type { ReplyKind } from './messages.ts';
import { contextQuote, quoteQueries } from './quotes.ts';
import { shownOf } from './info-sql.ts';
import { parseShown, quoteTextOfShown, type ShownInfoRow } from './shown-info.ts';
import type { QuotedLine } from '../../shared/console-api.ts';

/** One line of a conversation as the engines see it: what was said, no suggestions. */
export type ContextEntry = ContextLine & { kind: 'message' | 'reply'; id: number; msgId: string };

interface RawMessage {
  id: number;
  msg_id: string;
  client_id: string;
  role: MessageRole;
  from_user_id: string | null;
  content: string | null;
  received_at: number;
  known_name: string | null;
  shown: string | null;
}

interface RawReply {
  id: number;
  kind: ReplyKind;
  operator: string | null;
  msg_id: string;
  after_message_id: number;
  content: string;
  created_at: number;
}

/**
 * Messages and replies in transcript order: each reply right after the message it follows
 * (replies carry `afterMessageId`), ties by id. Shared by engine context and console transcript.
 */
export function interleave<M extends { id: number }, R extends { id: number }>(
  messages: readonly M[],
  replies: ReadonlyArray<R & { afterMessageId: number; tie?: number }>,
): Array<M | R> {
  // `tie` places a line among the replies after the same message by a reply id of its own choosing (a note's).
  const keyed = [
    ...messages.map((m) => ({ order: m.id * 2, id: m.id, item: m as M | R })),
    ...replies.map((r) => ({ order: r.afterMessageId * 2 + 1, id: r.tie ?? r.id, item: r as M | R })),
  ];
  return keyed.sort((a, b) => a.order - b.order || a.id - b.id).map((k) => k.item);
}

/** A message row of the context read, as either store reads it (`shown`: null when its message_info is not JSON). */
export interface ContextMessage {
  id: number;
  msgId: string;
  role: MessageRole;
  fromUserId: string | null;
  content: string | null;
  receivedAt: number;
  knownName: string | null;
  shown: ShownInfoRow | null;
}

/** A reply row of the context read (no suggestions, no handoffs), as either store reads it. */
export interface ContextReply {
  id: number;
  kind: ReplyKind;
  operatorName: string | null;
  msgId: string;
  afterMessageId: number;
  content: string;
  createdAt: number;
}

/**
 * The context lines from the newest `limit` messages and replies up to a message (each newest
 * first, as read) and the quotes they name (`found`): shared by the SQLite and PostgreSQL reads.
 */
export function contextEntries(rows: readonly ContextMessage[], found: Map<string, QuotedLine>, replyRows: readonly ContextReply[], limit: number): ContextEntry[] {
  const messages = rows.map((m): ContextEntry => {
    const own = m.shown;
    // The latest name this sender was sent under, else the one on this line.
    const name = m.knownName ?? own?.name ?? null;
    const quoted = contextQuote(own?.quoted_id ?? null, quoteTextOfShown(own), found.get(own?.quoted_id ?? ''));
    return {
      kind: 'message',
      id: m.id,
      msgId: m.msgId,
      role: m.role,
      speaker: name ?? m.fromUserId,
      ...(name ? { speakerName: name } : {}),
      content: m.content ?? '',
      at: m.receivedAt,
      ...(quoted ? { quoted } : {}),
    };
  });
  const replies = replyRows.map((r): ContextEntry & { afterMessageId: number } => ({
    kind: 'reply',
    id: r.id,
    msgId: r.msgId,
    role: r.kind === 'operator' ? 'staff' : 'ai',
    speaker: r.operatorName,
    ...(r.operatorName ? { speakerName: r.operatorName } : {}),
    content: r.content,
    at: r.createdAt,
    afterMessageId: r.afterMessageId,
  }));
  return interleave(messages, replies)
    .slice(-limit)
    .map(({ kind, id, msgId, ...line }): ContextEntry => {
      const { afterMessageId: _, ...rest } = line as typeof line & { afterMessageId?: number };
      return { kind, id, msgId, ...rest };
    });
}

/**
 * The engine context read on its own: the engine thread runs it on its read-only connection, so
 * auto replies need no read on the main thread. People are named as the console names them (the
 * latest nickname sent for their id), and a quote carries what it quoted, so a model reads
 * "Nora: …" and the question a customer's "yes, that one" answers.
 */
export function messageContext(db: Db) {
  const recentMessages = db.prepare(
    // Only the name and the quote come out of message_info, never the whole of it: a stored line
    // may hold megabytes (a data: URL file, or unknown fields stored before they were capped).
    `SELECT m.id, m.msg_id, m.client_id, m.role, m.from_user_id, m.content, m.received_at,
            p.nickname AS known_name, ${shownOf('m')} AS shown
     FROM messages m LEFT JOIN people p ON p.client_id = m.client_id AND p.user_id = m.from_user_id
     WHERE m.conversation_id = ? AND m.id <= ? AND m.role != 'command' ORDER BY m.id DESC LIMIT ?`,
  );
  const recentReplies = db.prepare(
    `SELECT id, kind, operator, msg_id, after_message_id, content, created_at FROM replies
     WHERE conversation_id = ? AND after_message_id <= ? AND kind != 'suggestion' AND handoff = 0
     ORDER BY after_message_id DESC, id DESC LIMIT ?`,
  );
  const lookUp = quoteQueries(db);
  /**
   * The newest `limit` transcript lines up to message `uptoId`, oldest first: customer and staff
   * messages, the AI's own answers and operators' replies (as staff). Suggestions and handoffs
   * are not part of what was said.
   */
  return function context(conversationId: string, uptoId: number, limit: number): ContextEntry[] {
    const raw = recentMessages.all(conversationId, uptoId, limit) as unknown as RawMessage[];
    const rows = raw.map(
      (m): ContextMessage => ({ id: m.id, msgId: m.msg_id, role: m.role, fromUserId: m.from_user_id, content: m.content, receivedAt: m.received_at, knownName: m.known_name, shown: parseShown(m.shown) }),
    );
    const found = raw.length > 0 ? lookUp(raw[0]!.client_id, rows.flatMap((m) => m.shown?.quoted_id ?? [])) : new Map<string, QuotedLine>();
    const replies = (recentReplies.all(conversationId, uptoId, limit) as unknown as RawReply[]).map(
      (r): ContextReply => ({
        id: r.id,
        kind: r.kind,
        operatorName: r.operator ? ((JSON.parse(r.operator) as { name?: string }).name ?? null) : null,
        msgId: r.msg_id,
        afterMessageId: r.after_message_id,
        content: r.content,
        createdAt: r.created_at,
      }),
    );
    return contextEntries(rows, found, replies, limit);
  };
}
