import { z } from 'zod';
import type { StoreContract } from '../contract.ts';
import { cancelledBeforeReplyNote, cancelledDeliveryReason, type Unanswered } from '../staff-wait.ts';
import { int8, type PgQueryable } from './pool.ts';

/**
 * staff-wait.ts's FIRST_UNANSWERED on PostgreSQL (read its comment for the rules), without SQLite's
 * INDEXED BY: the answer lines' partial index (messages_answer_lines) serves the first "after" as
 * the planner chooses it here.
 */
const FIRST_UNANSWERED = `SELECT m.id, m.received_at FROM messages m
  WHERE m.conversation_id = $1 AND m.role = 'customer' AND m.received_at >= $2
    AND (m.reply_reason IN ('auto_reply_stopped', 'auto_reply_paused')
         OR (m.reply_outcome = 'cancelled' AND m.reply_note = $3)
         OR (m.reply_reason = 'scheduled' AND EXISTS (
               SELECT 1 FROM replies x JOIN deliveries xd ON xd.reply_id = x.id
               WHERE x.conversation_id = $1 AND x.after_message_id >= m.id AND x.kind = 'auto' AND xd.state = 'cancelled' AND xd.last_error = $4)))
    AND m.id > coalesce((SELECT s.id FROM messages s
                         WHERE s.conversation_id = $1 AND (s.role IN ('staff', 'ai') OR (s.role = 'command' AND s.content = 'resume_auto_reply'))
                         ORDER BY s.id DESC LIMIT 1), 0)
    AND m.id > coalesce((SELECT r.after_message_id FROM replies r
                         WHERE r.conversation_id = $1 AND r.kind <> 'suggestion' AND r.content <> ''
                           AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.reply_id = r.id AND d.state = 'cancelled')
                         ORDER BY r.after_message_id DESC LIMIT 1), 0)
    AND m.received_at > coalesce((SELECT c.resolved_at FROM conversations c WHERE c.id = $1), 0)
  ORDER BY m.id LIMIT 1`;

/**
 * SQLite's `waiting` (the held conversations, then each one's first unanswered line) as one
 * statement: the held conversations come from conversations_held (a partial index on exactly this
 * condition), in its order as SQLite walks its own (ties: by id here, where SQLite has its rowid),
 * and FIRST_UNANSWERED runs for each as a lateral subquery (its conversation `held.id`, its other
 * parameters one lower). Every node's staff-wait sweep runs it each minute: one statement plans
 * once, where a query per conversation paid a round trip and a plan each (bench/pg-staff-wait.ts).
 */
const WAITING_SQL = `SELECT held.id AS conversation_id, w.id, w.received_at FROM conversations held
  CROSS JOIN LATERAL (${FIRST_UNANSWERED.replaceAll('$1', 'held.id').replaceAll('$2', '$1').replaceAll('$3', '$2').replaceAll('$4', '$3')}) w
  WHERE held.auto_reply <> 'active' AND held.needs_human = 0 AND held.last_message_at >= $1
  ORDER BY held.last_message_at, held.id`;

const lineRow = z.object({ id: int8, received_at: int8 });
const waitingRow = lineRow.extend({ conversation_id: z.string() });

/** Queries of the staff-wait watch on PostgreSQL: the same results as staff-wait.ts's. */
export function pgStaffWaitQueries(db: PgQueryable): StoreContract['staffWait'] {
  const imStopNote = cancelledBeforeReplyNote('stop_auto_reply');
  const imStopReason = cancelledDeliveryReason('stop_auto_reply');
  const firstOf = async (conversationId: string, since: number): Promise<Unanswered | undefined> => {
    const raw = (await db.query(FIRST_UNANSWERED, [conversationId, since, imStopNote, imStopReason])).rows[0];
    if (raw === undefined) return undefined;
    const r = lineRow.parse(raw);
    return { messageId: r.id, receivedAt: r.received_at };
  };
  return {
    firstUnanswered: firstOf,
    async waiting(since: number): Promise<Array<Unanswered & { conversationId: string }>> {
      return (await db.query(WAITING_SQL, [since, imStopNote, imStopReason])).rows.map((raw) => {
        const r = waitingRow.parse(raw);
        return { conversationId: r.conversation_id, messageId: r.id, receivedAt: r.received_at };
      });
    },
  };
}
