import { z } from 'zod';
import type { QuotedLine } from '../../../shared/console-api.ts';
import type { MessageRole } from '../../../shared/conversation.ts';
import { int8, type PgQueryable } from './pool.ts';

const quotedMessage = z.object({
  role: z.enum(['customer', 'staff', 'ai', 'command']),
  from_user_id: z.string().nullable(),
  content: z.string().nullable(),
  name: z.string().nullable(),
});
const quotedReply = z.object({ kind: z.string(), content: z.string(), operator: z.string().nullable() });

/**
 * What the answered scenarios (website_dialog, assist_dialog) read before they ask the engine, on
 * PostgreSQL: the people's names, what a quote points at, the auto_dialog message a suggestion is
 * for. The same results as the SQLite queries (people.ts, quotes.ts, messages.ts findAutoMessage).
 */
export function pgMessageReads(db: PgQueryable) {
  return {
    people: {
      async names(clientId: string, userIds: readonly string[]): Promise<Map<string, string>> {
        if (userIds.length === 0) return new Map();
        const r = await db.query('SELECT user_id, nickname FROM people WHERE client_id = $1 AND user_id = ANY ($2::text[])', [clientId, [...new Set(userIds)]]);
        return new Map(r.rows.map((row: { user_id: string; nickname: string }) => [row.user_id, row.nickname]));
      },
    },
    /** An IM message of the client by its msg_id (the newest), else one of the service's own replies by the msg_id its delivery carried. */
    async quotes(clientId: string, msgIds: Iterable<string>): Promise<Map<string, QuotedLine>> {
      const found = new Map<string, QuotedLine>();
      for (const msgId of new Set(msgIds)) {
        const m = (await db.query(
          `SELECT m.role, m.from_user_id, m.content, coalesce(p.nickname, m.shown ->> 'name') AS name FROM messages m
           LEFT JOIN people p ON p.client_id = m.client_id AND p.user_id = m.from_user_id
           WHERE m.client_id = $1 AND m.msg_id = $2 AND m.event_type = 'auto_dialog' ORDER BY m.id DESC LIMIT 1`,
          [clientId, msgId],
        )).rows[0];
        if (m) {
          const row = quotedMessage.parse(m);
          found.set(msgId, { msgId, role: row.role as MessageRole, speaker: row.from_user_id, speakerName: row.name, content: row.content ?? '' });
          continue;
        }
        const r = (await db.query(
          `SELECT r.kind, r.content, r.operator ->> 'name' AS operator FROM replies r JOIN conversations c ON c.id = r.conversation_id
           WHERE r.msg_id = $1 AND c.client_id = $2 AND r.kind <> 'suggestion'`,
          [msgId, clientId],
        )).rows[0];
        if (r) {
          const row = quotedReply.parse(r);
          found.set(msgId, { msgId, role: row.kind === 'operator' ? 'staff' : 'ai', speaker: null, speakerName: row.operator, content: row.content });
        }
      }
      return found;
    },
    messages: {
      async findAutoMessage(clientId: string, msgId: string): Promise<{ id: number; conversationId: string } | undefined> {
        const r = (await db.query(
          "SELECT id, conversation_id FROM messages WHERE client_id = $1 AND msg_id = $2 AND event_type = 'auto_dialog' ORDER BY id DESC LIMIT 1",
          [clientId, msgId],
        )).rows[0];
        if (!r) return undefined;
        const row = z.object({ id: int8, conversation_id: z.string() }).parse(r);
        return { id: row.id, conversationId: row.conversation_id };
      },
    },
  };
}
