import type { Store } from '../store/index.ts';
import { effectiveAutoReply, type AutoReplyState } from '../../shared/conversation.ts';
import { newId } from '../store/ids.ts';
import type { Operator } from '../../shared/console-workspace.ts';

export type StateResult = { kind: 'auto_reply_state'; previous: AutoReplyState | 'none'; cancelledReplies: number };

/** What stop_auto_reply does, from cmd_dialog or the console: stop, and cancel what was not sent. */
export function stopConversation(store: Store, conversationId: string, now: number, by: string): number {
  store.conversations.setAutoReply(conversationId, 'stopped', null);
  store.messages.cancelPendingReplies(conversationId, `auto-reply stopped by ${by} before the reply was made`);
  return store.deliveries.cancelForConversation(conversationId, `auto-reply stopped by ${by}`, now);
}

export function consoleStop(store: Store, conversationId: string, operator: Operator, now: number): StateResult | null {
  const conv = store.conversations.byId(conversationId);
  if (!conv) return null;
  const previous = effectiveAutoReply(conv.autoReply, conv.pausedUntil, now);
  const cancelledReplies = stopConversation(store, conv.id, now, 'the console');
  store.messages.insert({
    conversationId: conv.id,
    clientId: conv.clientId,
    eventType: 'cmd_dialog',
    msgId: newId('message'),
    role: 'command',
    fromUserId: null,
    fromUserType: null,
    content: 'stop_auto_reply',
    messageInfo: JSON.stringify({ event_type: 'cmd_dialog', content: 'stop_auto_reply', source: 'console' }),
    createTimestamp: null,
    receivedAt: now,
    replyScheduled: null,
    replyReason: null,
  });
  store.audit.insert({ at: now, operator, action: 'stop', conversationId: conv.id, detail: JSON.stringify({ previous, cancelled_replies: cancelledReplies }) });
  return { kind: 'auto_reply_state', previous, cancelledReplies };
}

export function consoleResume(store: Store, conversationId: string, operator: Operator, now: number): StateResult | null {
  const conv = store.conversations.byId(conversationId);
  if (!conv) return null;
  const previous = effectiveAutoReply(conv.autoReply, conv.pausedUntil, now);
  store.conversations.setAutoReply(conv.id, 'active', null);
  store.conversations.clearNeedsHuman(conv.id);
  store.audit.insert({ at: now, operator, action: 'resume', conversationId: conv.id, detail: JSON.stringify({ previous }) });
  return { kind: 'auto_reply_state', previous, cancelledReplies: 0 };
}

