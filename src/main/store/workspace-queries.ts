import type { Db } from './db.ts';

/** A customer message an operator reply answers. */
export interface AnsweredMessage {
  id: number;
  msgId: string;
  fromUserId: string | null;
}

interface RawAnswered {
  id: number;
  msg_id: string;
  from_user_id: string | null;
}

const toAnswered = (r: RawAnswered): AnsweredMessage => ({ id: r.id, msgId: r.msg_id, fromUserId: r.from_user_id });

/**
 * Reads behind operator replies and suggestions. Each walks one conversation's index from its
 * newest end, so the cost follows that conversation, not the database.
 */
export function workspaceQueries(db: Db) {
  const latestCustomer = db.prepare(
    "SELECT id, msg_id, from_user_id FROM messages WHERE conversation_id = ? AND role = 'customer' ORDER BY id DESC LIMIT 1",
  );
  const latestMessageId = db.prepare('SELECT max(id) AS id FROM messages WHERE conversation_id = ?');
  const latestAutoSendUrl = db.prepare(
    `SELECT CASE WHEN json_valid(message_info) THEN json_extract(message_info, '$.send_url') END AS send_url FROM messages
     WHERE conversation_id = ? AND event_type = 'auto_dialog' ORDER BY id DESC LIMIT 1`,
  );
  // Answered so far: up to the last staff message, or the last reply that was said (not a handoff,
  // not cancelled before it was made); suggestions answer nothing.
  // Group chatter that did not address the service (not_mentioned) asked it nothing: an operator
  // reply answering it would @-mention whoever spoke last instead of the customer who asked.
  const unanswered = db.prepare(
    `SELECT id, msg_id, from_user_id FROM messages WHERE conversation_id = ?1 AND role = 'customer' AND reply_reason IS NOT 'not_mentioned' AND id > max(
       coalesce((SELECT id FROM messages WHERE conversation_id = ?1 AND role = 'staff' ORDER BY id DESC LIMIT 1), 0),
       coalesce((SELECT max(after_message_id) FROM replies WHERE conversation_id = ?1 AND kind != 'suggestion' AND handoff = 0 AND cause IS NULL), 0))
     ORDER BY id DESC LIMIT ?2`,
  );
  const byMsgId = db.prepare("SELECT id, msg_id, from_user_id FROM messages WHERE conversation_id = ? AND msg_id = ? AND role = 'customer' ORDER BY id DESC LIMIT 1");
  // In a group, members' chatter the bot was not asked about is not what needs a human.
  const lastCustomerText = db.prepare(
    `SELECT m.content, m.from_user_id, p.nickname FROM messages m LEFT JOIN people p ON p.client_id = m.client_id AND p.user_id = m.from_user_id
     WHERE m.conversation_id = ? AND m.role = 'customer' AND m.content IS NOT NULL AND m.reply_reason IS NOT 'not_mentioned' ORDER BY m.id DESC LIMIT 1`,
  );
  // Someone spoke after a transcript line: a customer or staff message in the IM, or an operator
  // reply from the console (stored after the newest message there was). Bot replies and command
  // lines do not count: they do not change whether a human is needed.
  const spokenAfter = db.prepare(
    `SELECT EXISTS (SELECT 1 FROM messages WHERE conversation_id = ?1 AND id > ?2 AND role IN ('customer', 'staff'))
         OR EXISTS (SELECT 1 FROM replies WHERE conversation_id = ?1 AND after_message_id >= ?2 AND kind = 'operator') AS spoken`,
  );
  // What came after a console stop's line and outlives its Undo: when a person last spoke for the
  // business (staff in the IM, an operator reply), and whether the integration stopped it itself.
  const sinceStop = db.prepare(
    `SELECT max(coalesce((SELECT max(received_at) FROM messages WHERE conversation_id = ?1 AND id > ?2 AND role = 'staff'), -1),
                coalesce((SELECT max(created_at) FROM replies WHERE conversation_id = ?1 AND after_message_id >= ?2 AND kind = 'operator'), -1)) AS spoke,
            EXISTS (SELECT 1 FROM messages WHERE conversation_id = ?1 AND id > ?2 AND role = 'command' AND content = 'stop_auto_reply') AS stopped`,
  );
  // Who holds the conversation off the bot: the last stop's source, and the latest human answer
  // in the IM against the latest operator reply from the console.
  const holder = db.prepare(
    `SELECT (SELECT json_extract(message_info, '$.source') FROM messages
              WHERE conversation_id = ?1 AND role = 'command' AND content = 'stop_auto_reply' ORDER BY id DESC LIMIT 1) AS stop_source,
            (SELECT max(received_at) FROM messages WHERE conversation_id = ?1 AND role = 'staff') AS staff_at,
            (SELECT max(created_at) FROM replies WHERE conversation_id = ?1 AND kind = 'operator') AS operator_at`,
  );
  const kbQuestions = (n: number) => db.prepare(`SELECT id, question FROM kb_entries WHERE id IN (${Array(n).fill('?').join(',')})`);

  return {
    latestCustomerMessage(conversationId: string): AnsweredMessage | undefined {
      const r = latestCustomer.get(conversationId) as RawAnswered | undefined;
      return r && toAnswered(r);
    },
    latestMessageId(conversationId: string): number {
      return (latestMessageId.get(conversationId) as { id: number | null }).id ?? 0;
    },
    /** The send_url the conversation's latest auto_dialog message carried; null if it carried none. */
    latestAutoSendUrl(conversationId: string): string | null {
      const r = latestAutoSendUrl.get(conversationId) as { send_url: unknown } | undefined;
      return typeof r?.send_url === 'string' ? r.send_url : null;
    },
    /** Customer messages since the last answer, oldest first (at most `limit`, the newest ones). */
    unanswered(conversationId: string, limit: number): AnsweredMessage[] {
      return (unanswered.all(conversationId, limit) as unknown as RawAnswered[]).map(toAnswered).reverse();
    },
    /** The conversation's customer message with this msg_id. */
    customerMessage(conversationId: string, msgId: string): AnsweredMessage | undefined {
      const r = byMsgId.get(conversationId, msgId) as RawAnswered | undefined;
      return r && toAnswered(r);
    },
    /** What the customer last asked (in a group: the last line that addressed the service), and who asked it (name, else id). */
    lastCustomerText(conversationId: string): { text: string; by: string | null } | null {
      const r = lastCustomerText.get(conversationId) as { content: string; from_user_id: string | null; nickname: string | null } | undefined;
      return r ? { text: r.content, by: r.nickname ?? r.from_user_id } : null;
    },
    /** Whether a person wrote in the conversation after its message `messageId` (see spokenAfter). */
    spokenAfter(conversationId: string, messageId: number): boolean {
      return (spokenAfter.get(conversationId, messageId) as { spoken: number }).spoken === 1;
    },
    /** After transcript line `messageId`: when staff or an operator last spoke (null: nobody), and whether stop_auto_reply came. */
    sinceLine(conversationId: string, messageId: number): { humanAt: number | null; stopped: boolean } {
      const r = sinceStop.get(conversationId, messageId) as { spoke: number; stopped: number };
      return { humanAt: r.spoke < 0 ? null : r.spoke, stopped: r.stopped === 1 };
    },
    /**
     * Whether the console holds the bot off this conversation (stopped from the console, or paused
     * by an operator reply newer than any staff line from the IM) rather than staff in the IM.
     */
    heldByConsole(conversationId: string, state: 'stopped' | 'paused'): boolean {
      const r = holder.get(conversationId) as { stop_source: string | null; staff_at: number | null; operator_at: number | null };
      if (state === 'stopped') return r.stop_source === 'console';
      return r.operator_at !== null && (r.staff_at === null || r.operator_at >= r.staff_at);
    },
    /** Knowledge-base questions by id, for the sources of a transcript. */
    kbQuestions(ids: readonly number[]): Map<number, string> {
      const unique = [...new Set(ids)].slice(0, 500);
      if (unique.length === 0) return new Map();
      return new Map((kbQuestions(unique.length).all(...unique) as Array<{ id: number; question: string }>).map((r) => [r.id, r.question]));
    },
  };
}
