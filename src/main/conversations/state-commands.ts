import type { Store } from '../store/index.ts';
import { effectiveAutoReply, type AutoReplyState } from '../../shared/conversation.ts';
import { newId } from '../store/ids.ts';
import type { Operator } from '../../shared/console-workspace.ts';

export type StateResult = { kind: 'auto_reply_state'; previous: AutoReplyState | 'none'; cancelledReplies: number; restoredReplies?: number };

/** What stop_auto_reply does, from cmd_dialog or the console: stop, and cancel what was not sent. */
const STOPPED_BY = 'auto-reply stopped by ';

export function stopConversation(store: Store, conversationId: string, now: number, by: string): number {
  store.conversations.setAutoReply(conversationId, 'stopped', null);
  store.messages.cancelPendingReplies(conversationId, `auto-reply stopped by ${by} before the reply was made`);
  return store.deliveries.cancelForConversation(conversationId, `${STOPPED_BY}${by}`, now);
}

/**
 * A line in the transcript for a change of the conversation's state: the operator reads what
 * happened, when and by whom, where it happened. `info` says where it came from and who did it.
 */
function commandLine(store: Store, conv: { id: string; clientId: string }, command: 'stop_auto_reply' | 'resume_auto_reply', info: Record<string, unknown>, now: number): void {
  store.messages.insert({
    conversationId: conv.id,
    clientId: conv.clientId,
    eventType: 'cmd_dialog',
    msgId: newId('message'),
    role: 'command',
    fromUserId: null,
    fromUserType: null,
    content: command,
    messageInfo: JSON.stringify({ event_type: 'cmd_dialog', content: command, ...info }),
    createTimestamp: null,
    receivedAt: now,
    replyScheduled: null,
    replyReason: null,
  });
}

export function consoleStop(store: Store, conversationId: string, operator: Operator, now: number): StateResult | null {
  const conv = store.conversations.byId(conversationId);
  if (!conv) return null;
  const previous = effectiveAutoReply(conv.autoReply, conv.pausedUntil, now);
  const cancelledReplies = stopConversation(store, conv.id, now, 'the console');
  commandLine(store, conv, 'stop_auto_reply', { source: 'console', operator: { id: operator.id, name: operator.name } }, now);
  store.audit.insert({ at: now, operator, action: 'stop', conversationId: conv.id, detail: JSON.stringify({ previous, cancelled_replies: cancelledReplies }) });
  return { kind: 'auto_reply_state', previous, cancelledReplies };
}

/** How long after a console stop its Undo still brings back the replies the stop cancelled (the toast shows 5 s). */
export const UNDO_STOP_MS = 15_000;

export function consoleResume(store: Store, conversationId: string, operator: Operator, now: number, undoStop = false): StateResult | null {
  const conv = store.conversations.byId(conversationId);
  if (!conv) return null;
  const previous = effectiveAutoReply(conv.autoReply, conv.pausedUntil, now);
  store.conversations.setAutoReply(conv.id, 'active', null);
  store.conversations.clearNeedsHuman(conv.id);
  // Undo puts back exactly what that stop cancelled: the deliveries it marked, at its own time.
  const stop = undoStop ? store.audit.list(conv.id, 20).find((a) => a.action === 'stop') : undefined;
  const restoredReplies = stop && now - stop.at <= UNDO_STOP_MS ? store.deliveries.restoreCancelled(conv.id, `${STOPPED_BY}the console`, stop.at, now) : 0;
  // There is no resume on the wire (protocol section 4): a resume always comes from the console.
  // Resuming what was already active changed nothing, and says nothing.
  if (previous !== 'active') commandLine(store, conv, 'resume_auto_reply', { source: 'console', operator: { id: operator.id, name: operator.name }, ...(undoStop ? { undo: true } : {}) }, now);
  store.audit.insert({ at: now, operator, action: 'resume', conversationId: conv.id, detail: JSON.stringify({ previous, ...(undoStop ? { undo: true, restored_replies: restoredReplies } : {}) }) });
  return { kind: 'auto_reply_state', previous, cancelledReplies: 0, restoredReplies };
}

