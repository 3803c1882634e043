import { z } from 'zod';
import type { StoreContract, Awaitable } from '../contract.ts';
import type { ConversationSummary, Operator, QuotedLine, TranscriptEntry } from '../../../shared/console-api.ts';
import type { MessageRole, ReplyReason } from '../../../shared/conversation.ts';
import { finishTranscript, mentionedIds, messageEntry, noteEntry, replyEntry, waitOfFor, type TranscriptReplyRow } from '../transcript-entries.ts';
import { shownInfoText } from '../shown-compute.ts';
import { shownInfo, type ShownInfoRow } from '../shown-info.ts';
import type { Reader } from '../team.ts';
import { pgQuoted } from './context-queries.ts';
import { pgConversationPage, PG_LAST_TEXT, PgParams, pgSummary, pgUnreadFor } from './console-list-queries.ts';
import { pgMessageReads } from './message-reads.ts';
import { int8, type PgQueryable } from './pool.ts';

const nullableInt8 = int8.nullable();

const messageRow = z.object({
  id: int8,
  msg_id: z.string(),
  client_id: z.string(),
  role: z.enum(['customer', 'staff', 'ai', 'command']),
  from_user_id: z.string().nullable(),
  known_name: z.string().nullable(),
  content: z.string().nullable(),
  received_at: int8,
  reply_scheduled: nullableInt8,
  reply_reason: z.string().nullable(),
  reply_outcome: z.string().nullable(),
  reply_note: z.string().nullable(),
  info_bytes: z.number(),
  shown: z.record(z.string(), z.unknown()).nullable(),
  info: z.string().nullable(),
  delivery_id: nullableInt8,
  delivery_state: z.string().nullable(),
  delivery_attempts: z.number().nullable(),
  delivery_error: z.string().nullable(),
  delivery_next: nullableInt8,
});

const replyRow = z.object({
  id: int8,
  kind: z.string(),
  msg_id: z.string(),
  after_message_id: int8,
  content: z.string(),
  handoff: z.number(),
  confidence: z.number().nullable(),
  cause: z.string().nullable(),
  created_at: int8,
  sources: z.array(z.unknown()),
  engine: z.string(),
  operator: z.object({ id: z.string(), name: z.string() }).passthrough().nullable(),
  instruction: z.string().nullable(),
  reply_to: z.string(),
  delivery_id: nullableInt8,
  delivery_state: z.string().nullable(),
  delivery_attempts: z.number().nullable(),
  delivery_error: z.string().nullable(),
  delivery_next: nullableInt8,
  delivery_at: z.unknown(),
});

const noteRow = z.object({
  id: int8,
  msg_id: z.string(),
  after_message_id: int8,
  after_reply_id: int8,
  author: z.object({ id: z.string(), name: z.string() }).passthrough(),
  content: z.string(),
  mentions: z.array(z.string()),
  created_at: int8,
});

// As console-queries.ts: the page's messages, their sender's latest name, and the latest delivery
// of the reply that answered each; `shown` as stored, message_info only for a row without it.
const MESSAGES_SQL = `
  SELECT m.id, m.msg_id, m.client_id, m.role, m.from_user_id, m.content, m.received_at, m.reply_scheduled, m.reply_reason, m.reply_outcome, m.reply_note,
         octet_length(m.message_info) AS info_bytes, m.shown, CASE WHEN m.shown IS NULL THEN m.message_info END AS info,
         p.nickname AS known_name,
         d.id AS delivery_id, d.state AS delivery_state, d.attempts AS delivery_attempts, d.last_error AS delivery_error, d.next_attempt_at AS delivery_next
  FROM (SELECT id FROM messages WHERE conversation_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3) page
  JOIN messages m ON m.id = page.id
  LEFT JOIN people p ON p.client_id = m.client_id AND p.user_id = m.from_user_id
  LEFT JOIN replies r ON m.reply_msg_id IS NOT NULL AND r.msg_id = m.reply_msg_id
  LEFT JOIN deliveries d ON d.id = (SELECT max(id) FROM deliveries WHERE reply_id = r.id)
  ORDER BY m.id DESC`;

// A reply with several deliveries is a line per delivery, oldest first (SQLite walks deliveries_reply so).
const REPLIES_SQL = `
  SELECT r.id, r.kind, r.msg_id, r.after_message_id, r.content, r.handoff, r.confidence, r.cause, r.created_at, r.sources, r.engine,
         r.operator, r.instruction, r.reply_to,
         d.id AS delivery_id, d.state AS delivery_state, d.attempts AS delivery_attempts, d.last_error AS delivery_error, d.next_attempt_at AS delivery_next,
         d.message_info::jsonb -> 'at_list' AS delivery_at
  FROM replies r LEFT JOIN deliveries d ON d.reply_id = r.id
  WHERE r.conversation_id = $1 AND r.after_message_id >= $2 AND r.after_message_id < $3 ORDER BY r.id, d.id`;

/** A reply's reply_to as stored (a JSON array of msg_ids); anything else reads as none. */

/** A row's `shown`: as stored, else computed from its message_info (null: not JSON), as SQLite's shownOf. */
function shownOf(shown: Record<string, unknown> | null, info: string | null, role: MessageRole): ShownInfoRow | null {
  if (shown) return shown as unknown as ShownInfoRow;
  const text = info === null ? null : shownInfoText(info, role);
  return text === null ? null : (JSON.parse(text) as ShownInfoRow);
}

/**
 * The console's read models on PostgreSQL (console-queries.ts): a conversation with its last line,
 * the list (console-list-queries.ts), and transcript pages with replies, notes, quotes, mentions
 * and deliveries, entry for entry as SQLite gives them. `kbQuestions` is the knowledge group's.
 */
export function pgConsoleQueries(db: PgQueryable, kbQuestions: (ids: readonly number[]) => Awaitable<Map<number, string>>): StoreContract['console'] {
  const people = pgMessageReads(db).people;
  return {
    async conversation(id: string, reader: Reader | null = null): Promise<ConversationSummary | undefined> {
      const p = new PgParams();
      const unread = reader ? `, ${pgUnreadFor(p, reader)}` : '';
      const row = (await db.query(`SELECT c.*, ${PG_LAST_TEXT}${unread} FROM conversations c WHERE c.id = ${p.add(id)}`, p.values)).rows[0] as Record<string, unknown> | undefined;
      return row && pgSummary(row);
    },
    conversations: (f) => pgConversationPage(db, f),
    hasEarlier: async (conversationId: string, id: number) => (await db.query('SELECT 1 FROM messages WHERE conversation_id = $1 AND id < $2 LIMIT 1', [conversationId, id])).rows.length > 0,
    async transcript(conversationId: string, limit: number, beforeId = Number.MAX_SAFE_INTEGER): Promise<TranscriptEntry[]> {
      const rows = (await db.query(MESSAGES_SQL, [conversationId, beforeId, limit])).rows.map((r) => messageRow.parse(r)).reverse();
      const head = (await db.query("SELECT id, attempts, next_attempt_at FROM deliveries WHERE conversation_id = $1 AND state = 'pending' ORDER BY id LIMIT 1", [conversationId])).rows[0];
      const waitOf = waitOfFor(head && z.object({ id: int8, attempts: z.number(), next_attempt_at: int8 }).parse(head));
      const firstId = rows[0]?.id ?? 0;
      const shown = rows.map((m) => shownInfo(shownOf(m.shown, m.info, m.role), m.info_bytes));
      const clientId = rows[0]?.client_id;
      const quotes = clientId !== undefined ? await pgQuoted(db, clientId, shown.flatMap((v) => v.quotedId ?? [])) : new Map<string, QuotedLine>();
      const messageEntries = rows.map((m, i) => messageEntry({ ...m, reply_reason: m.reply_reason as ReplyReason | null }, shown[i]!, quotes, waitOf));
      const replyEntries = (await db.query(REPLIES_SQL, [conversationId, firstId, beforeId])).rows.map((raw) => {
        const r = replyRow.parse(raw);
        // The operator as stored, as SQLite's JSON.parse gives it.
        return replyEntry({ ...r, operator: (r.operator as Operator | null) ?? null, sources: r.sources as TranscriptReplyRow['sources'], delivery_at: (r.delivery_at as string[] | null) ?? null }, waitOf);
      });
      const noteRows = (await db.query('SELECT * FROM notes WHERE conversation_id = $1 AND after_message_id >= $2 AND after_message_id < $3 ORDER BY id', [conversationId, firstId, beforeId])).rows.map((n) =>
        noteRow.parse(n),
      );
      const mentioned = [...new Set(noteRows.flatMap((n) => n.mentions))];
      const named = new Map(
        mentioned.length ? (await db.query('SELECT id, name FROM agents WHERE id = ANY ($1::text[])', [mentioned])).rows.map((a: { id: string; name: string }) => [a.id, a.name]) : [],
      );
      const noteEntries = noteRows.map((n) => noteEntry({ ...n, author: n.author as Operator }, named));
      const names = clientId !== undefined ? await people.names(clientId, mentionedIds([...messageEntries, ...replyEntries])) : new Map<string, string>();
      const questions = await kbQuestions(replyEntries.flatMap((e) => (e.sources ?? []).map((src) => src.id)));
      return finishTranscript(messageEntries, replyEntries, noteEntries, names, questions);
    },
  };
}
