import type { Db } from './db.ts';
import type { ConversationPage, ConversationSummary, DeliveryWait, Operator, QuotedLine, TranscriptEntry } from '../../shared/console-api.ts';
import type { MessageRole, ReplyReason } from '../../shared/conversation.ts';
import type { RawConversation } from './conversations.ts';
import { conversationPage, LAST_TEXT, toSummary, type ConversationFilter } from './console-list.ts';
import { interleave } from './message-context.ts';
import { quoteQueries } from './quotes.ts';
import { peopleQueries } from './people.ts';
import { shownOf } from './info-sql.ts';
import { parseShown, shownInfo } from './shown-info.ts';
import { UNREAD_FOR, type Reader } from './team.ts';

/** A reply's reply_to as stored (a JSON array of msg_ids); anything else reads as none. */
function msgIds(json: string): string[] {
  const v = JSON.parse(json) as unknown;
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

type RawConv = RawConversation & { last_line: string | null; my_unread?: number };

export { messageSearch, SHORT_SEARCH_WINDOW, type ConversationFilter } from './console-list.ts';

/** Read models for the console: lists and transcripts shaped for display. */
export function consoleQueries(db: Db, kbQuestions: (ids: readonly number[]) => Map<number, string>) {
  const byId = db.prepare(`SELECT c.*, ${LAST_TEXT} FROM conversations c WHERE c.id = ?`);
  const byIdFor = db.prepare(`SELECT c.*, ${LAST_TEXT}, ${UNREAD_FOR} AS my_unread FROM conversations c WHERE c.id = ?`);
  const notes = db.prepare('SELECT * FROM notes WHERE conversation_id = ? AND after_message_id >= ? AND after_message_id < ? ORDER BY id');
  const accountNames = db.prepare('SELECT id, name FROM agents WHERE id IN (SELECT value FROM json_each(?))');
  const quoted = quoteQueries(db);
  const people = peopleQueries(db);
  // A message's answer is only as good as its delivery: the why-line needs the state of the
  // delivery of the reply that answered it (one made, then cancelled by a stop, never arrived).
  // What the console shows of each message_info comes out in SQL, never the whole of it: a stored
  // line may hold megabytes (a data: URL file, or unknown fields stored before they were capped).
  const messages = db.prepare(
    `SELECT m.id, m.msg_id, m.client_id, m.role, m.from_user_id, m.content, m.received_at, m.reply_scheduled, m.reply_reason, m.reply_outcome, m.reply_note,
            octet_length(m.message_info) AS info_bytes, ${shownOf('m')} AS info,
            p.nickname AS known_name,
            d.id AS delivery_id, d.state AS delivery_state, d.attempts AS delivery_attempts, d.last_error AS delivery_error, d.next_attempt_at AS delivery_next
     FROM (SELECT id FROM messages WHERE conversation_id = ? AND id < ? ORDER BY id DESC LIMIT ?) page
     JOIN messages m ON m.id = page.id
     LEFT JOIN people p ON p.client_id = m.client_id AND p.user_id = m.from_user_id
     LEFT JOIN replies r ON m.reply_msg_id IS NOT NULL AND r.msg_id = m.reply_msg_id
     LEFT JOIN deliveries d ON d.id = (SELECT max(id) FROM deliveries WHERE reply_id = r.id)
     ORDER BY m.id DESC`,
  );
  const earlier = db.prepare('SELECT 1 AS found FROM messages WHERE conversation_id = ? AND id < ? LIMIT 1');
  const replies = db.prepare(
    `SELECT r.id, r.kind, r.msg_id, r.after_message_id, r.content, r.handoff, r.confidence, r.cause, r.created_at, r.sources, r.engine,
            r.operator, r.instruction, r.reply_to,
            d.id AS delivery_id, d.state AS delivery_state, d.attempts AS delivery_attempts, d.last_error AS delivery_error, d.next_attempt_at AS delivery_next,
            json_extract(d.message_info, '$.at_list') AS delivery_at
     FROM replies r LEFT JOIN deliveries d ON d.reply_id = r.id
     WHERE r.conversation_id = ? AND r.after_message_id >= ? AND r.after_message_id < ? ORDER BY r.id`,
  );
  // The conversation's oldest pending delivery: the only one the outbox may send (in order per
  // conversation); every later pending one waits behind it.
  const head = db.prepare(
    "SELECT id, attempts, next_attempt_at FROM deliveries INDEXED BY deliveries_pending WHERE conversation_id = ? AND state = 'pending' ORDER BY id LIMIT 1",
  );

  return {
    /** With `reader`, its unread count is theirs; without, the shared one (a console with no account). */
    conversation(id: string, reader: Reader | null = null): ConversationSummary | undefined {
      const r = (reader ? byIdFor.get(reader.id, reader.floor, id) : byId.get(id)) as RawConv | undefined;
      return r && toSummary(r);
    },
    /** One page of the console list; see conversationPage. */
    conversations(f: ConversationFilter): ConversationPage {
      return conversationPage(db, f);
    },
    /** Whether messages older than `id` exist (the "load earlier" button). */
    hasEarlier(conversationId: string, id: number): boolean {
      return earlier.get(conversationId, id) !== undefined;
    },
    transcript(conversationId: string, limit: number, beforeId = Number.MAX_SAFE_INTEGER): TranscriptEntry[] {
      const rows = (messages.all(conversationId, beforeId, limit) as Array<{
        id: number;
        msg_id: string;
        client_id: string;
        role: MessageRole;
        from_user_id: string | null;
        known_name: string | null;
        content: string | null;
        received_at: number;
        reply_scheduled: number | null;
        reply_reason: ReplyReason | null;
        reply_outcome: string | null;
        reply_note: string | null;
        info_bytes: number;
        info: string | null;
        delivery_id: number | null;
        delivery_state: string | null;
        delivery_attempts: number | null;
        delivery_error: string | null;
        delivery_next: number | null;
      }>).reverse();
      const first = head.get(conversationId) as { id: number; attempts: number; next_attempt_at: number } | undefined;
      const waitOf = (id: number, state: string, next: number | null): DeliveryWait | Record<string, never> => {
        if (state !== 'pending') return {};
        const behind = first && first.id < id ? { id: first.id, failing: first.attempts > 0, nextAttemptAt: first.next_attempt_at } : null;
        return { nextAttemptAt: next, behind };
      };
      const firstId = rows[0]?.id ?? 0;
      const shown = rows.map((m) => shownInfo(parseShown(m.info), m.info_bytes));
      const clientId = rows[0]?.client_id;
      const quotes = clientId !== undefined ? quoted(clientId, shown.flatMap((v) => v.quotedId ?? [])) : new Map<string, QuotedLine>();
      const messageEntries: TranscriptEntry[] = rows.map((m, i) => {
        const { messageInfo, stored, name, quotedId: quote, mentions } = shown[i]!;
        return {
          kind: 'message',
          id: m.id,
          msgId: m.msg_id,
          role: m.role,
          speaker: m.from_user_id,
          // The latest name this sender was sent under, else the one on this line.
          speakerName: m.known_name ?? name,
          ...(quote ? { quoted: quotes.get(quote) ?? null } : {}),
          // Named below, with the replies' mentions, in one lookup.
          ...(mentions.length > 0 ? { mentions: mentions.map((id) => ({ id, name: null })) } : {}),
          content: m.content ?? '',
          at: m.received_at,
          decision: m.reply_reason
            ? {
                scheduled: m.reply_scheduled === 1,
                reason: m.reply_reason,
                outcome: m.reply_outcome,
                note: m.reply_note,
                delivery:
                  m.delivery_state === null
                    ? null
                    : { id: m.delivery_id!, state: m.delivery_state, attempts: m.delivery_attempts!, lastError: m.delivery_error, ...waitOf(m.delivery_id!, m.delivery_state, m.delivery_next) },
              }
            : null,
          messageInfo,
          stored,
        };
      });
      const replyEntries: Array<TranscriptEntry & { afterMessageId: number; tie?: number }> = [];
      for (const r of replies.all(conversationId, firstId, beforeId) as Array<{
        id: number;
        kind: string;
        msg_id: string;
        after_message_id: number;
        content: string;
        handoff: number;
        confidence: number | null;
        cause: string | null;
        created_at: number;
        sources: string;
        engine: string;
        operator: string | null;
        instruction: string | null;
        reply_to: string;
        delivery_id: number | null;
        delivery_state: string | null;
        delivery_attempts: number | null;
        delivery_error: string | null;
        delivery_next: number | null;
        delivery_at: string | null;
      }>) {
        // An operator reply is a staff line, named by the operator who sent it from the console.
        const operator = r.operator ? (JSON.parse(r.operator) as Operator) : undefined;
        replyEntries.push({
          kind: r.kind === 'suggestion' ? 'suggestion' : 'reply',
          id: r.id,
          msgId: r.msg_id,
          role: operator ? 'staff' : 'ai',
          speaker: operator?.id ?? null,
          ...(operator ? { operator, speakerName: operator.name } : {}),
          ...(r.kind === 'suggestion' ? { instruction: r.instruction } : {}),
          // A bot's reply names what it answered: the console teaches the bot from the pair.
          ...(r.kind === 'auto' || r.kind === 'website' ? { replyTo: msgIds(r.reply_to) } : {}),
          content: r.content,
          at: r.created_at,
          handoff: r.handoff === 1,
          confidence: r.confidence,
          cause: r.cause,
          sources: JSON.parse(r.sources) as Array<{ id: number; score: number }>,
          engine: r.engine,
          delivery:
            r.delivery_id === null
              ? null
              : { id: r.delivery_id, state: r.delivery_state!, attempts: r.delivery_attempts!, lastError: r.delivery_error, ...waitOf(r.delivery_id, r.delivery_state!, r.delivery_next) },
          afterMessageId: r.after_message_id,
          // In a group a reply @-mentions whom it answers (protocol section 7).
          ...(r.delivery_at ? { mentions: (JSON.parse(r.delivery_at) as string[]).map((id) => ({ id, name: null })) } : {}),
        });
      }
      // Notes sit after the replies that were there when they were written (tie: just after that reply's id).
      const noteRows = notes.all(conversationId, firstId, beforeId) as Array<{ id: number; msg_id: string; after_message_id: number; after_reply_id: number; author: string; content: string; mentions: string; created_at: number }>;
      const mentioned = noteRows.flatMap((n) => JSON.parse(n.mentions) as string[]);
      const named = new Map(mentioned.length ? (accountNames.all(JSON.stringify([...new Set(mentioned)])) as Array<{ id: string; name: string }>).map((a) => [a.id, a.name]) : []);
      const noteEntries = noteRows.map((n) => {
        const author = JSON.parse(n.author) as Operator;
        const ids = JSON.parse(n.mentions) as string[];
        return {
          kind: 'note' as const,
          id: n.id,
          msgId: n.msg_id,
          role: 'staff' as const,
          speaker: author.id,
          speakerName: author.name,
          operator: author,
          content: n.content,
          at: n.created_at,
          ...(ids.length ? { mentions: ids.map((id) => ({ id, name: named.get(id) ?? null })) } : {}),
          afterMessageId: n.after_message_id,
          tie: n.after_reply_id + 0.5,
        };
      });
      // Who every line of the page @-mentions, by the latest names sent: one lookup for the page.
      const mentioning = [...messageEntries, ...replyEntries].filter((e) => e.mentions !== undefined);
      const names = clientId !== undefined ? people.names(clientId, mentioning.flatMap((e) => e.mentions!.map((m) => m.id))) : new Map<string, string>();
      for (const e of mentioning) e.mentions = e.mentions!.map((m) => ({ id: m.id, name: names.get(m.id) ?? null }));
      // Sources name their knowledge-base question (one lookup for the page); a deleted entry has none.
      const questions = kbQuestions(replyEntries.flatMap((e) => (e.sources ?? []).map((src) => src.id)));
      for (const e of replyEntries) {
        e.sources = e.sources?.map((src) => (questions.has(src.id) ? { ...src, question: questions.get(src.id)! } : src));
      }
      return interleave(messageEntries, [...replyEntries, ...noteEntries]).map((e) => {
        if (!('afterMessageId' in e)) return e;
        const { afterMessageId: _after, tie: _tie, ...entry } = e;
        return entry;
      });
    },
  };
}
