import type { Db } from './db.ts';
import type { MessageRole } from '../../shared/conversation.ts';
import type { ContextLine } from '../engines/engine.ts';
import type { ReplyKind } from './messages.ts';
import { contextQuote, quoteQueries } from './quotes.ts';
import { shownOf } from './info-sql.ts';
import { parseShown, quoteTextOfShown } from './shown-info.ts';

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
    const rows = recentMessages.all(conversationId, uptoId, limit) as unknown as RawMessage[];
    const shown = rows.map((m) => parseShown(m.shown));
    const found = rows.length > 0 ? lookUp(rows[0]!.client_id, shown.flatMap((s) => s?.quoted_id ?? [])) : new Map();
    const messages = rows.map((m, i): ContextEntry => {
      const own = shown[i] ?? null;
      // The latest name this sender was sent under, else the one on this line.
      const name = m.known_name ?? own?.name ?? null;
      const quoted = contextQuote(own?.quoted_id ?? null, quoteTextOfShown(own), found.get(own?.quoted_id ?? ''));
      return {
        kind: 'message',
        id: m.id,
        msgId: m.msg_id,
        role: m.role,
        speaker: name ?? m.from_user_id,
        ...(name ? { speakerName: name } : {}),
        content: m.content ?? '',
        at: m.received_at,
        ...(quoted ? { quoted } : {}),
      };
    });
    const replies = (recentReplies.all(conversationId, uptoId, limit) as unknown as RawReply[]).map((r): ContextEntry & { afterMessageId: number } => {
      const operator = r.operator ? ((JSON.parse(r.operator) as { name?: string }).name ?? null) : null;
      return {
        kind: 'reply',
        id: r.id,
        msgId: r.msg_id,
        role: r.kind === 'operator' ? 'staff' : 'ai',
        speaker: operator,
        ...(operator ? { speakerName: operator } : {}),
        content: r.content,
        at: r.created_at,
        afterMessageId: r.after_message_id,
      };
    });
    return interleave(messages, replies)
      .slice(-limit)
      .map(({ kind, id, msgId, ...line }): ContextEntry => {
        const { afterMessageId: _, ...rest } = line as typeof line & { afterMessageId?: number };
        return { kind, id, msgId, ...rest };
      });
  };
}
