import type { ReplyStore } from '../store/contract.ts';
import type { EngineAnswer } from '../engines/engine.ts';
import type { ReplyOutcome } from '../store/messages.ts';
import { effectiveAutoReply } from '../../shared/conversation.ts';

/** An engine's answer to a conversation's pending customer messages, ready to commit. */
export interface AutoReplyCommand {
  kind: 'auto_reply';
  conversationId: string;
  clientId: string;
  messageIds: number[];
  replyTo: string[];
  replyMsgId: string;
  engine: string;
  answer: EngineAnswer;
  /** What to send: the answer, the client's fallback text on a handoff, or nothing. */
  delivery: { sendUrl: string; messageInfo: string } | null;
  now: number;
}

export interface SettleCommand {
  kind: 'settle_replies';
  messageIds: number[];
  outcome: Exclude<ReplyOutcome, 'pending' | 'answered'>;
  note: string;
}

/** `alert`: this handoff newly flagged the conversation needs_human (the console alerts once). */
export type AutoReplyResult = { kind: 'auto_reply'; outcome: 'answered' | 'handoff' | 'cancelled'; deliveryId: number | null; alert: boolean };

/**
 * Commits an auto reply together with its delivery row. The auto-reply state is checked again
 * here, inside the transaction: a reply made while a human took over is stored for the trace,
 * but its delivery is cancelled, never sent.
 */
export async function commitAutoReply(store: ReplyStore, c: AutoReplyCommand): Promise<AutoReplyResult> {
  const conv = await store.conversations.byId(c.conversationId);
  const state = conv ? effectiveAutoReply(conv.autoReply, conv.pausedUntil, c.now) : 'stopped';
  const humanTookOver = state !== 'active';
  const cause = humanTookOver ? `auto-reply ${state} before the reply was made` : c.answer.handoff ? (c.answer.cause ?? 'no confident answer') : null;
  const replyId = await store.messages.insertReply({
    conversationId: c.conversationId,
    kind: 'auto',
    msgId: c.replyMsgId,
    replyTo: c.replyTo,
    afterMessageId: Math.max(...c.messageIds),
    content: c.answer.content,
    handoff: c.answer.handoff,
    engine: c.engine,
    confidence: c.answer.confidence,
    sources: c.answer.sources,
    // The reply also keeps an answer's own cause (matched by words only: embeddings down); the messages' note does not.
    cause: cause ?? c.answer.cause ?? null,
    createdAt: c.now,
  });
  let deliveryId: number | null = null;
  if (c.delivery) {
    deliveryId = await store.deliveries.insert({
      kind: 'auto',
      replyId,
      replyMsgId: c.replyMsgId,
      conversationId: c.conversationId,
      clientId: c.clientId,
      sendUrl: c.delivery.sendUrl,
      messageInfo: c.delivery.messageInfo,
      state: humanTookOver ? 'cancelled' : 'pending',
      nextAttemptAt: c.now,
      createdAt: c.now,
    });
  }
  const outcome = humanTookOver ? 'cancelled' : c.answer.handoff ? 'handoff' : 'answered';
  const alert = outcome === 'handoff' && await store.conversations.flagNeedsHuman(c.conversationId, c.now, 'no_answer');
  for (const id of c.messageIds) await store.messages.settleReply(id, outcome, c.replyMsgId, cause);
  if (!humanTookOver) await store.conversations.touch(c.conversationId, 1, c.now);
  return { kind: 'auto_reply', outcome, deliveryId: humanTookOver ? null : deliveryId, alert };
}

export async function settleReplies(store: ReplyStore, c: SettleCommand): Promise<number> {
  let n = 0;
  for (const id of c.messageIds) if (await store.messages.settleReply(id, c.outcome, null, c.note)) n++;
  return n;
}
