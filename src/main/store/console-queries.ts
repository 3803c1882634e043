import type { Db } from './db.ts';
import { finishTranscript, mentionedIds, messageEntry, noteEntry, replyEntry, waitOfFor, type TranscriptMessageRow, type TranscriptNoteRow, type TranscriptReplyRow } from './transcript-entries.ts';
import type { ConversationPage, ConversationSummary, Operator, QuotedLine, TranscriptEntry } from '../../shared/console-api.ts';
import type { RawConversation } from './conversations.ts';
import { conversationPage, LAST_TEXT, toSummary, type ConversationFilter } from './console-list.ts';
import { quoteQueries } from './quotes.ts';
import { peopleQueries } from './people.ts';
import { shownOf } from './info-sql.ts';
import { parseShown, shownInfo } from './shown-info.ts';
import { UNREAD_FOR, type Reader } from './team.ts';

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
      const rows = (messages.all(conversationId, beforeId, limit) as unknown as Array<TranscriptMessageRow & { client_id: string; info_bytes: number; info: string | null }>).reverse();
      const waitOf = waitOfFor(head.get(conversationId) as { id: number; attempts: number; next_attempt_at: number } | undefined);
      const firstId = rows[0]?.id ?? 0;
      const shown = rows.map((m) => shownInfo(parseShown(m.info), m.info_bytes));
      const clientId = rows[0]?.client_id;
      const quotes = clientId !== undefined ? quoted(clientId, shown.flatMap((v) => v.quotedId ?? [])) : new Map<string, QuotedLine>();
      const messageEntries = rows.map((m, i) => messageEntry(m, shown[i]!, quotes, waitOf));
      const replyEntries = (replies.all(conversationId, firstId, beforeId) as Array<Omit<TranscriptReplyRow, 'sources' | 'operator' | 'delivery_at'> & { sources: string; operator: string | null; delivery_at: string | null }>).map((r) =>
        replyEntry({ ...r, sources: JSON.parse(r.sources) as TranscriptReplyRow['sources'], operator: r.operator ? (JSON.parse(r.operator) as Operator) : null, delivery_at: r.delivery_at ? (JSON.parse(r.delivery_at) as string[]) : null }, waitOf),
      );
      const noteRows = (notes.all(conversationId, firstId, beforeId) as Array<Omit<TranscriptNoteRow, 'author' | 'mentions'> & { author: string; mentions: string }>).map(
        (n): TranscriptNoteRow => ({ ...n, author: JSON.parse(n.author) as Operator, mentions: JSON.parse(n.mentions) as string[] }),
      );
      const mentioned = [...new Set(noteRows.flatMap((n) => n.mentions))];
      const named = new Map(mentioned.length ? (accountNames.all(JSON.stringify(mentioned)) as Array<{ id: string; name: string }>).map((a) => [a.id, a.name]) : []);
      const noteEntries = noteRows.map((n) => noteEntry(n, named));
      // Who every line of the page @-mentions, by the latest names sent; the knowledge-base question of every source: one lookup each.
      const names = clientId !== undefined ? people.names(clientId, mentionedIds([...messageEntries, ...replyEntries])) : new Map<string, string>();
      const questions = kbQuestions(replyEntries.flatMap((e) => (e.sources ?? []).map((src) => src.id)));
      return finishTranscript(messageEntries, replyEntries, noteEntries, names, questions);
    },
  };
}
