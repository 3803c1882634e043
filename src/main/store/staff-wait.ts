import type { Db } from './db.ts';

/** A customer message nobody has answered yet. */
export interface Unanswered {
  messageId: number;
  receivedAt: number;
}

/**
 * The first customer message that waits for a human (the bot held off: auto-reply stopped or
 * paused) and that nobody answered: no staff or AI line in the IM after it, no reply from the bot
 * or an operator made after it, and no Resolve since it came. `?1` is the conversation, `?2` the
 * oldest time that still counts.
 */
const FIRST_UNANSWERED = `SELECT m.id, m.received_at FROM messages m
  WHERE m.conversation_id = ?1 AND m.role = 'customer' AND m.reply_reason IN ('auto_reply_stopped', 'auto_reply_paused')
    AND m.received_at > ?2
    AND m.id > coalesce((SELECT max(s.id) FROM messages s WHERE s.conversation_id = ?1 AND s.role IN ('staff', 'ai')), 0)
    AND m.id > coalesce((SELECT max(r.after_message_id) FROM replies r WHERE r.conversation_id = ?1 AND r.kind != 'suggestion' AND r.content != ''), 0)
    AND m.received_at > coalesce((SELECT c.resolved_at FROM conversations c WHERE c.id = ?1), 0)
  ORDER BY m.id LIMIT 1`;

/** Queries of the staff-wait watch (src/main/conversations/staff-wait.ts). */
export function staffWaitQueries(db: Db) {
  const first = db.prepare(FIRST_UNANSWERED);
  // Once at start: the conversations whose bot is held off and that are not in Needs you already.
  const held = db.prepare("SELECT id FROM conversations WHERE auto_reply != 'active' AND needs_human = 0");
  return {
    /** The first unanswered line received after `since`. */
    firstUnanswered(conversationId: string, since: number): Unanswered | undefined {
      const r = first.get(conversationId, since) as { id: number; received_at: number } | undefined;
      return r && { messageId: r.id, receivedAt: r.received_at };
    },
    /** Conversations a customer may be waiting in since after `since`, with the message they wait since. */
    waiting(since: number): Array<Unanswered & { conversationId: string }> {
      const out: Array<Unanswered & { conversationId: string }> = [];
      for (const { id } of held.all() as Array<{ id: string }>) {
        const r = first.get(id, since) as { id: number; received_at: number } | undefined;
        if (r) out.push({ conversationId: id, messageId: r.id, receivedAt: r.received_at });
      }
      return out;
    },
  };
}
