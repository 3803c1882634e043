import type { Db } from './db.ts';

/** The note a stop leaves on the customer messages whose reply it cancelled before it was made. */
export function cancelledBeforeReplyNote(by: string): string {
  return `auto-reply stopped by ${by} before the reply was made`;
}

/** A customer message nobody has answered yet. */
export interface Unanswered {
  messageId: number;
  receivedAt: number;
}

/** The reason a stop from the IM leaves on the auto-reply deliveries it cancelled. */
export function cancelledDeliveryReason(by: string): string {
  return `auto-reply stopped by ${by}`;
}

/**
 * The first customer line, received at `?2` or later, that waits for a human and that nobody
 * answered. `?1` is the conversation.
 *
 * It waits for a human when the bot held off (auto-reply stopped or paused), or when staff stopped
 * the bot from the IM before its reply reached the customer: the reply still to be made (`?3`:
 * that cancel's note on the line), or made and its delivery cancelled (`?4`: the delivery's reason).
 *
 * Nobody answered it when no staff or AI line came after it, no console Resume (the bot has it
 * again), no reply from the bot or an operator made after it whose delivery was not cancelled (one
 * that never left never reached the customer), and no Resolve since it came. Each "after" is the
 * newest such row, found from the end on an index.
 */
const FIRST_UNANSWERED = `SELECT m.id, m.received_at FROM messages m
  WHERE m.conversation_id = ?1 AND m.role = 'customer' AND m.received_at >= ?2
    AND (m.reply_reason IN ('auto_reply_stopped', 'auto_reply_paused')
         OR (m.reply_outcome = 'cancelled' AND m.reply_note = ?3)
         OR (m.reply_reason = 'scheduled' AND EXISTS (
               SELECT 1 FROM replies x JOIN deliveries xd ON xd.reply_id = x.id
               WHERE x.conversation_id = ?1 AND x.after_message_id >= m.id AND x.kind = 'auto' AND xd.state = 'cancelled' AND xd.last_error = ?4)))
    AND m.id > coalesce((SELECT s.id FROM messages s INDEXED BY messages_answer_lines
                         WHERE s.conversation_id = ?1 AND (s.role IN ('staff', 'ai') OR (s.role = 'command' AND s.content = 'resume_auto_reply'))
                         ORDER BY s.id DESC LIMIT 1), 0)
    AND m.id > coalesce((SELECT r.after_message_id FROM replies r
                         WHERE r.conversation_id = ?1 AND r.kind != 'suggestion' AND r.content != ''
                           AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.reply_id = r.id AND d.state = 'cancelled')
                         ORDER BY r.after_message_id DESC LIMIT 1), 0)
    AND m.received_at > coalesce((SELECT c.resolved_at FROM conversations c WHERE c.id = ?1), 0)
  ORDER BY m.id LIMIT 1`;

/** Queries of the staff-wait watch (src/main/conversations/staff-wait.ts). */
export function staffWaitQueries(db: Db) {
  const imStopNote = cancelledBeforeReplyNote('stop_auto_reply');
  const imStopReason = cancelledDeliveryReason('stop_auto_reply');
  const first = db.prepare(FIRST_UNANSWERED);
  // Once at start: the conversations whose bot is held off, not in Needs you, and written in lately.
  const held = db.prepare(
    "SELECT id FROM conversations INDEXED BY conversations_held WHERE auto_reply != 'active' AND needs_human = 0 AND last_message_at >= ?",
  );
  const firstOf = (conversationId: string, since: number): Unanswered | undefined => {
    const r = first.get(conversationId, since, imStopNote, imStopReason) as { id: number; received_at: number } | undefined;
    return r && { messageId: r.id, receivedAt: r.received_at };
  };
  return {
    /** The first unanswered line received after `since`. */
    firstUnanswered: firstOf,
    /** Conversations a customer has waited in since after `since`, with the line they wait since. */
    waiting(since: number): Array<Unanswered & { conversationId: string }> {
      const out: Array<Unanswered & { conversationId: string }> = [];
      for (const { id } of held.all(since) as Array<{ id: string }>) {
        const w = firstOf(id, since);
        if (w) out.push({ conversationId: id, ...w });
      }
      return out;
    },
  };
}
