import { z } from 'zod';
import type { StoreContract } from '../contract.ts';
import type { AnsweredMessage } from '../workspace-queries.ts';
import { int8, type PgQueryable } from './pool.ts';

const answeredRow = z.object({ id: int8, msg_id: z.string(), from_user_id: z.string().nullable() });
const toAnswered = (raw: unknown): AnsweredMessage => {
  const r = answeredRow.parse(raw);
  return { id: r.id, msgId: r.msg_id, fromUserId: r.from_user_id };
};

// SQLite's `IS NOT 'not_mentioned'` (true for NULL too) is IS DISTINCT FROM here; its two-argument
// max() is greatest().
const UNANSWERED_SQL = `SELECT id, msg_id, from_user_id FROM messages
  WHERE conversation_id = $1 AND role = 'customer' AND reply_reason IS DISTINCT FROM 'not_mentioned' AND id > greatest(
    coalesce((SELECT id FROM messages WHERE conversation_id = $1 AND role = 'staff' ORDER BY id DESC LIMIT 1), 0),
    coalesce((SELECT max(after_message_id) FROM replies WHERE conversation_id = $1 AND kind <> 'suggestion' AND handoff = 0 AND cause IS NULL), 0))
  ORDER BY id DESC LIMIT $2`;

const LAST_CUSTOMER_TEXT_SQL = `SELECT m.content, m.from_user_id, p.nickname FROM messages m
  LEFT JOIN people p ON p.client_id = m.client_id AND p.user_id = m.from_user_id
  WHERE m.conversation_id = $1 AND m.role = 'customer' AND m.content IS NOT NULL AND m.reply_reason IS DISTINCT FROM 'not_mentioned'
  ORDER BY m.id DESC LIMIT 1`;

const SPOKEN_AFTER_SQL = `SELECT EXISTS (SELECT 1 FROM messages WHERE conversation_id = $1 AND id > $2 AND role IN ('customer', 'staff'))
  OR EXISTS (SELECT 1 FROM replies WHERE conversation_id = $1 AND after_message_id >= $2 AND kind = 'operator') AS spoken`;

const SINCE_LINE_SQL = `SELECT greatest(coalesce((SELECT max(received_at) FROM messages WHERE conversation_id = $1 AND id > $2 AND role = 'staff'), -1),
    coalesce((SELECT max(created_at) FROM replies WHERE conversation_id = $1 AND after_message_id >= $2 AND kind = 'operator'), -1)) AS spoke,
  EXISTS (SELECT 1 FROM messages WHERE conversation_id = $1 AND id > $2 AND role = 'command' AND content = 'stop_auto_reply') AS stopped`;

// As SQLite's json_extract, the cast fails on a stop line whose message_info is not JSON.
const HOLDER_SQL = `SELECT (SELECT message_info::jsonb ->> 'source' FROM messages
    WHERE conversation_id = $1 AND role = 'command' AND content = 'stop_auto_reply' ORDER BY id DESC LIMIT 1) AS stop_source,
  (SELECT max(received_at) FROM messages WHERE conversation_id = $1 AND role = 'staff') AS staff_at,
  (SELECT max(created_at) FROM replies WHERE conversation_id = $1 AND kind = 'operator') AS operator_at`;

const holderRow = z.object({ stop_source: z.string().nullable(), staff_at: int8.nullable(), operator_at: int8.nullable() });

/**
 * SQLite's `CASE WHEN json_valid(message_info) THEN json_extract(message_info, '$.send_url') END`
 * read as a string: message_info is kept as received and may not be JSON, which a ::jsonb cast
 * would fail on (PostgreSQL 15 has no IS JSON), so it is parsed here. json_extract gives an object
 * or array as its JSON text, a number or boolean as a number (not a string: null here).
 */
function sendUrlOf(info: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(info);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const v = (parsed as Record<string, unknown>)['send_url'];
  if (typeof v === 'string') return v;
  return typeof v === 'object' && v !== null ? JSON.stringify(v) : null;
}

/** workspace-queries.ts on PostgreSQL: the same reads and results, each on one conversation's index. */
export function pgWorkspaceQueries(db: PgQueryable): StoreContract['workspace'] {
  const one = async (text: string, values: unknown[]): Promise<unknown> => (await db.query(text, values)).rows[0];
  return {
    async latestCustomerMessage(conversationId: string): Promise<AnsweredMessage | undefined> {
      const r = await one("SELECT id, msg_id, from_user_id FROM messages WHERE conversation_id = $1 AND role = 'customer' ORDER BY id DESC LIMIT 1", [conversationId]);
      return r === undefined ? undefined : toAnswered(r);
    },
    async latestMessageId(conversationId: string): Promise<number> {
      return z.object({ id: int8.nullable() }).parse(await one('SELECT max(id) AS id FROM messages WHERE conversation_id = $1', [conversationId])).id ?? 0;
    },
    async latestAutoSendUrl(conversationId: string): Promise<string | null> {
      const r = (await one("SELECT message_info FROM messages WHERE conversation_id = $1 AND event_type = 'auto_dialog' ORDER BY id DESC LIMIT 1", [conversationId])) as
        | { message_info: string }
        | undefined;
      return r === undefined ? null : sendUrlOf(r.message_info);
    },
    async unanswered(conversationId: string, limit: number): Promise<AnsweredMessage[]> {
      return (await db.query(UNANSWERED_SQL, [conversationId, limit])).rows.map(toAnswered).reverse();
    },
    async customerMessage(conversationId: string, msgId: string): Promise<AnsweredMessage | undefined> {
      const r = await one("SELECT id, msg_id, from_user_id FROM messages WHERE conversation_id = $1 AND msg_id = $2 AND role = 'customer' ORDER BY id DESC LIMIT 1", [
        conversationId,
        msgId,
      ]);
      return r === undefined ? undefined : toAnswered(r);
    },
    async lastCustomerText(conversationId: string): Promise<{ text: string; by: string | null } | null> {
      const r = (await one(LAST_CUSTOMER_TEXT_SQL, [conversationId])) as { content: string; from_user_id: string | null; nickname: string | null } | undefined;
      return r ? { text: r.content, by: r.nickname ?? r.from_user_id } : null;
    },
    async spokenAfter(conversationId: string, messageId: number): Promise<boolean> {
      return z.object({ spoken: z.boolean() }).parse(await one(SPOKEN_AFTER_SQL, [conversationId, messageId])).spoken;
    },
    async sinceLine(conversationId: string, messageId: number): Promise<{ humanAt: number | null; stopped: boolean }> {
      const r = z.object({ spoke: int8, stopped: z.boolean() }).parse(await one(SINCE_LINE_SQL, [conversationId, messageId]));
      return { humanAt: r.spoke < 0 ? null : r.spoke, stopped: r.stopped };
    },
    async heldByConsole(conversationId: string, state: 'stopped' | 'paused'): Promise<boolean> {
      const r = holderRow.parse(await one(HOLDER_SQL, [conversationId]));
      if (state === 'stopped') return r.stop_source === 'console';
      return r.operator_at !== null && (r.staff_at === null || r.operator_at >= r.staff_at);
    },
    async kbQuestions(ids: readonly number[]): Promise<Map<number, string>> {
      const unique = [...new Set(ids)].slice(0, 500);
      if (unique.length === 0) return new Map();
      const r = await db.query('SELECT id, question FROM kb_entries WHERE id = ANY ($1::bigint[]) ORDER BY id', [unique]);
      return new Map(r.rows.map((raw) => z.object({ id: int8, question: z.string() }).parse(raw)).map((x) => [x.id, x.question]));
    },
  };
}
