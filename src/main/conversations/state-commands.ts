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
 * A line in the transcript for a change the console made to the conversation's state: the
 * operator reads what happened, when and by whom, where it happened. `extra` adds to what the line
 * records (an Undo's flag, a note). Returns the line's message id: an undo of a Resolve looks for
 * what was said after it.
 */
export function commandLine(
  store: Store,
  conv: { id: string; clientId: string },
  command: 'stop_auto_reply' | 'resume_auto_reply' | 'resolve' | 'undo_resolve' | 'flag_human',
  operator: Operator,
  now: number,
  extra: Record<string, unknown> = {},
): number {
  const info = { source: 'console', operator: { id: operator.id, name: operator.name }, ...extra };
  return store.messages.insert({
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
  commandLine(store, conv, 'stop_auto_reply', operator, now);
  // What Undo puts back: a pause keeps its end (a colleague's takeover still holds the bot off).
  const pausedUntil = previous === 'paused' ? conv.pausedUntil : null;
  store.audit.insert({ at: now, operator, action: 'stop', conversationId: conv.id, detail: JSON.stringify({ previous, paused_until: pausedUntil, cancelled_replies: cancelledReplies }) });
  return { kind: 'auto_reply_state', previous, cancelledReplies };
}

/** The state a console stop found, from its audit record: what its Undo restores. */
function stateBeforeStop(detail: string | null, now: number): { state: AutoReplyState; pausedUntil: number | null } {
  const d = JSON.parse(detail ?? '{}') as { previous?: string; paused_until?: number | null };
  if (d.previous === 'paused' && typeof d.paused_until === 'number' && d.paused_until > now) return { state: 'paused', pausedUntil: d.paused_until };
  if (d.previous === 'stopped') return { state: 'stopped', pausedUntil: null };
  return { state: 'active', pausedUntil: null };
}

/** How long after a console stop its Undo still brings back the replies the stop cancelled (the toast shows 5 s). */
export const UNDO_STOP_MS = 15_000;

export function consoleResume(store: Store, conversationId: string, operator: Operator, now: number, undoStop = false): StateResult | null {
  const conv = store.conversations.byId(conversationId);
  if (!conv) return null;
  const previous = effectiveAutoReply(conv.autoReply, conv.pausedUntil, now);
  // Undo puts back exactly what that stop changed: the state it found (a pause with its end) and
  // the deliveries it cancelled, at its own time. A plain resume lets the bot answer again. Neither
  // touches "needs a human": the customer still waits for a person until someone resolves it.
  const found = undoStop ? store.audit.list(conv.id, 20).find((a) => a.action === 'stop') : undefined;
  const stop = found && now - found.at <= UNDO_STOP_MS ? found : undefined;
  const restore = stop ? stateBeforeStop(stop.detail, now) : { state: 'active' as const, pausedUntil: null };
  store.conversations.setAutoReply(conv.id, restore.state, restore.pausedUntil);
  const restoredReplies = stop ? store.deliveries.restoreCancelled(conv.id, `${STOPPED_BY}the console`, stop.at, now) : 0;
  // There is no resume on the wire (protocol section 4): a resume always comes from the console.
  // Resuming what was already active changed nothing, and says nothing.
  if (previous !== 'active' && restore.state !== 'stopped') commandLine(store, conv, 'resume_auto_reply', operator, now, undoStop ? { undo: true } : {});
  store.audit.insert({ at: now, operator, action: 'resume', conversationId: conv.id, detail: JSON.stringify({ previous, ...(undoStop ? { undo: true, restored_replies: restoredReplies } : {}) }) });
  return { kind: 'auto_reply_state', previous, cancelledReplies: 0, restoredReplies };
}

