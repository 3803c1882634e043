import type { Db } from './db.ts';
import type { ReplyReason } from '../../shared/conversation.ts';
import type { ReplyOutcome } from './messages.ts';
import type { AttemptRow, DeliveryState } from './deliveries.ts';

/** Why a customer message was or was not answered, from decision to the last delivery attempt. */
export interface MessageTrace {
  msgId: string;
  decision: { scheduled: boolean; reason: ReplyReason } | null;
  outcome: ReplyOutcome | null;
  note: string | null;
  reply: {
    msgId: string;
    content: string;
    handoff: boolean;
    engine: string;
    confidence: number | null;
    sources: unknown[];
    cause: string | null;
  } | null;
  delivery: { id: number; state: DeliveryState; sendUrl: string; attempts: AttemptRow[] } | null;
}

export function traceQueries(db: Db, attemptsOf: (deliveryId: number) => AttemptRow[]) {
  const message = db.prepare('SELECT msg_id, reply_scheduled, reply_reason, reply_outcome, reply_msg_id, reply_note FROM messages WHERE id = ?');
  const reply = db.prepare('SELECT id, msg_id, content, handoff, engine, confidence, sources, cause FROM replies WHERE msg_id = ?');
  const delivery = db.prepare('SELECT id, state, send_url FROM deliveries WHERE reply_id = ? ORDER BY id DESC LIMIT 1');

  return {
    forMessage(messageId: number): MessageTrace | undefined {
      const m = message.get(messageId) as
        | { msg_id: string; reply_scheduled: number | null; reply_reason: ReplyReason | null; reply_outcome: ReplyOutcome | null; reply_msg_id: string | null; reply_note: string | null }
        | undefined;
      if (!m) return undefined;
      const r = m.reply_msg_id
        ? (reply.get(m.reply_msg_id) as
            | { id: number; msg_id: string; content: string; handoff: number; engine: string; confidence: number | null; sources: string; cause: string | null }
            | undefined)
        : undefined;
      const d = r ? (delivery.get(r.id) as { id: number; state: DeliveryState; send_url: string } | undefined) : undefined;
      return {
        msgId: m.msg_id,
        decision: m.reply_reason ? { scheduled: m.reply_scheduled === 1, reason: m.reply_reason } : null,
        outcome: m.reply_outcome,
        note: m.reply_note,
        reply: r
          ? { msgId: r.msg_id, content: r.content, handoff: r.handoff === 1, engine: r.engine, confidence: r.confidence, sources: JSON.parse(r.sources) as unknown[], cause: r.cause }
          : null,
        delivery: d ? { id: d.id, state: d.state, sendUrl: d.send_url, attempts: attemptsOf(d.id) } : null,
      };
    },
  };
}
