import { z } from 'zod';
import { contextEntries, type ContextEntry, type ContextMessage, type ContextReply } from '../message-context.ts';
import { shownInfoText } from '../shown-compute.ts';
import type { ShownInfoRow } from '../shown-info.ts';
import type { QuotedLine } from '../../../shared/console-api.ts';
import type { MessageRole } from '../../../shared/conversation.ts';
import type { ReplyKind } from '../messages.ts';
import { int8 } from './leases/lease.ts';
import type { PgQueryable } from './pool.ts';


// `shown` is jsonb (read as an object); a row without one (its message_info is not JSON, or it
// was written before the column) has it computed here, as SQLite's shownOf computes it in SQL.
const MESSAGES_SQL = `
  SELECT m.id, m.msg_id, m.client_id, m.role, m.from_user_id, m.content, m.received_at, p.nickname AS known_name,
         m.shown, CASE WHEN m.shown IS NULL THEN m.message_info END AS info
  FROM messages m LEFT JOIN people p ON p.client_id = m.client_id AND p.user_id = m.from_user_id
  WHERE m.conversation_id = $1 AND m.id <= $2 AND m.role <> 'command' ORDER BY m.id DESC LIMIT $3`;

const REPLIES_SQL = `
  SELECT id, kind, operator ->> 'name' AS operator_name, msg_id, after_message_id, content, created_at FROM replies
  WHERE conversation_id = $1 AND after_message_id <= $2 AND kind <> 'suggestion' AND handoff = 0
  ORDER BY after_message_id DESC, id DESC LIMIT $3`;

// As quotes.ts's quoteQueries: an IM message of the client by msg_id (newest), else one of our replies.
const QUOTED_MESSAGE_SQL = `
  SELECT m.role, m.from_user_id, m.content, p.nickname, m.shown ->> 'name' AS shown_name,
         CASE WHEN m.shown IS NULL THEN m.message_info END AS info
  FROM messages m LEFT JOIN people p ON p.client_id = m.client_id AND p.user_id = m.from_user_id
  WHERE m.client_id = $1 AND m.msg_id = $2 AND m.event_type = 'auto_dialog' ORDER BY m.id DESC LIMIT 1`;

const QUOTED_REPLY_SQL = `
  SELECT r.kind, r.content, r.operator ->> 'name' AS operator_name FROM replies r JOIN conversations c ON c.id = r.conversation_id
  WHERE r.msg_id = $1 AND c.client_id = $2 AND r.kind <> 'suggestion'`;

const role = z.enum(['customer', 'staff', 'ai', 'command']);

const messageRow = z.object({
  id: int8,
  msg_id: z.string(),
  client_id: z.string(),
  role,
  from_user_id: z.string().nullable(),
  content: z.string().nullable(),
  received_at: int8,
  known_name: z.string().nullable(),
  shown: z.record(z.string(), z.unknown()).nullable(),
  info: z.string().nullable(),
});

const replyRow = z.object({
  id: int8,
  kind: z.enum(['auto', 'website', 'suggestion', 'operator']),
  operator_name: z.string().nullable(),
  msg_id: z.string(),
  after_message_id: int8,
  content: z.string(),
  created_at: int8,
});

/** A row's `shown`: as stored, else computed from its message_info (null: not JSON). */
function shownOf(shown: Record<string, unknown> | null, info: string | null, r: MessageRole): ShownInfoRow | null {
  if (shown) return shown as unknown as ShownInfoRow;
  const text = info === null ? null : shownInfoText(info, r);
  return text === null ? null : (JSON.parse(text) as ShownInfoRow);
}

/** What the quotes of the lines read point at (quotes.ts's quoteQueries on PostgreSQL). */
async function quoted(db: PgQueryable, clientId: string, msgIds: Iterable<string>): Promise<Map<string, QuotedLine>> {
  const found = new Map<string, QuotedLine>();
  for (const msgId of new Set(msgIds)) {
    const m = (await db.query(QUOTED_MESSAGE_SQL, [clientId, msgId])).rows[0] as
      | { role: MessageRole; from_user_id: string | null; content: string | null; nickname: string | null; shown_name: string | null; info: string | null }
      | undefined;
    if (m) {
      const name = m.nickname ?? (m.info === null ? m.shown_name : (shownOf(null, m.info, m.role)?.name ?? null));
      found.set(msgId, { msgId, role: m.role, speaker: m.from_user_id, speakerName: name, content: m.content ?? '' });
      continue;
    }
    const r = (await db.query(QUOTED_REPLY_SQL, [msgId, clientId])).rows[0] as { kind: ReplyKind; content: string; operator_name: string | null } | undefined;
    if (r) found.set(msgId, { msgId, role: r.kind === 'operator' ? 'staff' : 'ai', speaker: null, speakerName: r.operator_name, content: r.content });
  }
  return found;
}

/** message-context.ts's messageContext on PostgreSQL: the same lines, read with the caller's connection. */
export function pgMessageContext(db: PgQueryable) {
  return async function context(conversationId: string, uptoId: number, limit: number): Promise<ContextEntry[]> {
    const raw = (await db.query(MESSAGES_SQL, [conversationId, uptoId, limit])).rows.map((r) => messageRow.parse(r));
    const rows = raw.map(
      (m): ContextMessage => ({ id: m.id, msgId: m.msg_id, role: m.role, fromUserId: m.from_user_id, content: m.content, receivedAt: m.received_at, knownName: m.known_name, shown: shownOf(m.shown, m.info, m.role) }),
    );
    const found = raw.length > 0 ? await quoted(db, raw[0]!.client_id, rows.flatMap((m) => m.shown?.quoted_id ?? [])) : new Map<string, QuotedLine>();
    const replies = (await db.query(REPLIES_SQL, [conversationId, uptoId, limit])).rows.map((x) => {
      const r = replyRow.parse(x);
      return { id: r.id, kind: r.kind, operatorName: r.operator_name, msgId: r.msg_id, afterMessageId: r.after_message_id, content: r.content, createdAt: r.created_at } satisfies ContextReply;
    });
    return contextEntries(rows, found, replies, limit);
  };
}
export { quoted as pgQuoted };
