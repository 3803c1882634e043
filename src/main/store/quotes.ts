import type { Db } from './db.ts';
import type { MessageRole } from '../../shared/conversation.ts';
import type { QuotedLine } from '../../shared/console-api.ts';
import type { ContextQuote } from '../engines/engine.ts';
import { shownOf } from './info-sql.ts';
import { atMostCodePoints, LIMITS } from '../../shared/protocol/message-schema.ts';

/** The msg_id a message quotes (message_type 2), if it names one. */
export function quotedMsgId(info: Record<string, unknown>): string | null {
  const quote = info['quote'];
  if (info['message_type'] !== 2 || quote === null || typeof quote !== 'object') return null;
  const msgId = (quote as Record<string, unknown>)['msg_id'];
  return typeof msgId === 'string' && msgId !== '' ? msgId : null;
}

/**
 * The text a quote carries itself, when the integrator sent it (`quote.content`, kept as given),
 * cut as a message's text is (LIMITS.contentMaxChars): what the engines read of it, as the
 * context read cuts it in SQL (info-sql.ts's quoteTextSql).
 */
export function quoteTextOf(info: Record<string, unknown>): string | null {
  const quote = info['quote'] as Record<string, unknown> | undefined;
  const text = quote?.['content'];
  if (typeof text !== 'string' || text.trim() === '') return null;
  return atMostCodePoints(text, LIMITS.contentMaxChars) ? text : [...text].slice(0, LIMITS.contentMaxChars).join('');
}

/**
 * What an engine is told a message quoted: the quote's own text (quoteTextOf), else the quoted
 * message as stored (`found`, looked up by its quotedMsgId), with who said it; null when the
 * message quotes nothing, or nothing Switchboard can name.
 */
export function contextQuote(quotedId: string | null, ownText: string | null, found: QuotedLine | undefined): ContextQuote | null {
  if (quotedId === null) return null;
  const content = ownText ?? found?.content ?? null;
  return content === null ? null : { speaker: found ? (found.speakerName ?? found.speaker) : null, content };
}

/**
 * What a quote points at, when Switchboard has it: an IM message of the same client (by the
 * integrator's msg_id) or one of the service's own replies (by the msg_id its delivery carried).
 * Two index seeks per quote; only the quotes of the lines being read are looked up.
 */
export function quoteQueries(db: Db) {
  const message = db.prepare(
    `SELECT m.role, m.from_user_id, m.content, coalesce(p.nickname, ${shownOf('m')} ->> '$.name') AS name FROM messages m INDEXED BY messages_auto_msg_id
     LEFT JOIN people p ON p.client_id = m.client_id AND p.user_id = m.from_user_id
     WHERE m.client_id = ? AND m.msg_id = ? AND m.event_type = 'auto_dialog' ORDER BY m.id DESC LIMIT 1`,
  );
  const reply = db.prepare(
    `SELECT r.kind, r.content, json_extract(r.operator, '$.name') AS operator FROM replies r JOIN conversations c ON c.id = r.conversation_id
     WHERE r.msg_id = ? AND c.client_id = ? AND r.kind != 'suggestion'`,
  );
  return function quoted(clientId: string, msgIds: Iterable<string>): Map<string, QuotedLine> {
    const found = new Map<string, QuotedLine>();
    for (const msgId of new Set(msgIds)) {
      const m = message.get(clientId, msgId) as { role: MessageRole; from_user_id: string | null; content: string | null; name: string | null } | undefined;
      if (m) {
        found.set(msgId, { msgId, role: m.role, speaker: m.from_user_id, speakerName: m.name, content: m.content ?? '' });
        continue;
      }
      const r = reply.get(msgId, clientId) as { kind: string; content: string; operator: string | null } | undefined;
      if (r) found.set(msgId, { msgId, role: r.kind === 'operator' ? 'staff' : 'ai', speaker: null, speakerName: r.operator, content: r.content });
    }
    return found;
  };
}
