import type { IngestStore, StoreContract } from '../store/contract.ts';
import { effectiveAutoReply, type AutoReplyState } from '../../shared/conversation.ts';
import { newId } from '../store/ids.ts';
import type { Operator } from '../../shared/console-workspace.ts';
import type { UndoStopOutcome } from '../../shared/console-api.ts';
import { cancelledBeforeReplyNote, cancelledDeliveryReason } from '../store/staff-wait.ts';

/** Customer messages an Undo put back to pending: the reply scheduler takes them up again. */
export interface Rescheduled {
  clientId: string;
  /** When each message arrived, oldest first: its quiet period runs from there, as it did before the stop. */
  receivedAt: number[];
}

export type StateResult = {
  kind: 'auto_reply_state';
  previous: AutoReplyState | 'none';
  cancelledReplies: number;
  restoredReplies?: number;
  /** An Undo of a stop made in a quiet period: the messages whose reply is to be made after all. */
  rescheduled?: Rescheduled | null;
  /** What an Undo of a stop found (only when one was asked for). */
  undo?: UndoStopOutcome;
};

/**
 * What stop_auto_reply does, from cmd_dialog or the console: stop, and cancel what was not sent.
 * Returns the deliveries cancelled (a count) and the customer messages whose reply will not be made.
 */
export async function stopConversation(store: Pick<IngestStore, 'conversations' | 'messages' | 'deliveries'>, conversationId: string, now: number, by: string): Promise<{ deliveries: number; messageIds: number[] }> {
  await store.conversations.setAutoReply(conversationId, 'stopped', null);
  const messageIds = await store.messages.cancelPendingReplies(conversationId, cancelledBeforeReplyNote(by));
  return { deliveries: await store.deliveries.cancelForConversation(conversationId, cancelledDeliveryReason(by), now), messageIds };
}

/**
 * A line in the transcript for a change the console made to the conversation's state: the
 * operator reads what happened, when and by whom, where it happened. `extra` adds to what the line
 * records (an Undo's flag, a note). Returns the line's message id: an undo of a Resolve looks for
 * what was said after it.
 */
export async function commandLine(
  store: StoreContract,
  conv: { id: string; clientId: string },
  command: 'stop_auto_reply' | 'resume_auto_reply' | 'resolve' | 'undo_resolve' | 'flag_human',
  operator: Operator,
  now: number,
  extra: Record<string, unknown> = {},
): Promise<number> {
  const info = { source: 'console', operator: { id: operator.id, name: operator.name }, ...extra };
  return await store.messages.insert({
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

export async function consoleStop(store: StoreContract, conversationId: string, operator: Operator, now: number): Promise<StateResult | null> {
  const conv = await store.conversations.byId(conversationId);
  if (!conv) return null;
  const previous = effectiveAutoReply(conv.autoReply, conv.pausedUntil, now);
  const stopped = await stopConversation(store, conv.id, now, 'the console');
  const cancelledReplies = stopped.deliveries;
  const line = await commandLine(store, conv, 'stop_auto_reply', operator, now);
  // What Undo puts back: a pause keeps its end (a colleague's takeover still holds the bot off),
  // and the customer messages still in their quiet period get their reply after all. The line:
  // what was said or done after it still holds after the Undo.
  const pausedUntil = previous === 'paused' ? conv.pausedUntil : null;
  const detail = { previous, paused_until: pausedUntil, cancelled_replies: cancelledReplies, cancelled_messages: stopped.messageIds, line };
  await store.audit.insert({ at: now, operator, action: 'stop', conversationId: conv.id, detail: JSON.stringify(detail) });
  return { kind: 'auto_reply_state', previous, cancelledReplies };
}

interface UndoOfStop {
  state: AutoReplyState;
  pausedUntil: number | null;
  messageIds: number[];
  /** The integration's own stop_auto_reply came after this stop: it holds, nothing is put back. */
  overtaken: boolean;
  /** The stop's transcript line (null for stops recorded before lines were). */
  line: number | null;
}

/**
 * What a console stop found and cancelled, from its audit record: what its Undo restores, with
 * what happened since applied on top. A colleague who spoke meanwhile (staff in the IM, an
 * operator reply) would have paused the bot from then had there been no stop, so the Undo pauses
 * it from then: it never wakes a bot a person has just held off.
 */
async function undoOfStop(store: StoreContract, conv: { id: string; clientId: string }, detail: string | null, now: number): Promise<UndoOfStop> {
  const d = JSON.parse(detail ?? '{}') as { previous?: string; paused_until?: number | null; cancelled_messages?: unknown; line?: unknown };
  // Stops recorded before the messages were: nothing of theirs to put back.
  const messageIds = Array.isArray(d.cancelled_messages) ? d.cancelled_messages.filter((id): id is number => Number.isSafeInteger(id)) : [];
  // Stops recorded before their line was: nothing known of what came after.
  const since = typeof d.line === 'number' ? await store.workspace.sinceLine(conv.id, d.line) : { humanAt: null, stopped: false };
  const line = typeof d.line === 'number' ? d.line : null;
  if (d.previous === 'stopped' || since.stopped) return { state: 'stopped', pausedUntil: null, messageIds, overtaken: since.stopped, line };
  const pauseMinutes = since.humanAt === null ? 0 : ((await store.clients.get(conv.clientId))?.settings.pauseMinutes ?? 0);
  const byHuman = since.humanAt !== null && pauseMinutes > 0 ? since.humanAt + pauseMinutes * 60_000 : null;
  const found = d.previous === 'paused' && typeof d.paused_until === 'number' ? d.paused_until : null;
  const until = Math.max(found ?? 0, byHuman ?? 0);
  if (until > now) return { state: 'paused', pausedUntil: until, messageIds, overtaken: false, line };
  return { state: 'active', pausedUntil: null, messageIds, overtaken: false, line };
}

/** Why an Undo of the latest console stop (`found`, null when there is none) would change nothing; null when it may. */
function undoRefusal(found: { at: number; newest: boolean; restore: UndoOfStop } | null, now: number): UndoStopOutcome | null {
  if (!found) return 'not_stopped';
  if (!found.newest) return 'already_undone';
  if (now - found.at > UNDO_STOP_MS) return 'expired';
  if (found.restore.overtaken) return 'stopped_elsewhere';
  if (found.restore.state === 'stopped') return 'was_stopped';
  return null;
}

/** How long after a console stop its Undo still brings back the replies the stop cancelled (the toast shows 5 s). */
export const UNDO_STOP_MS = 15_000;

export async function consoleResume(store: StoreContract, conversationId: string, operator: Operator, now: number, undoStop = false): Promise<StateResult | null> {
  const conv = await store.conversations.byId(conversationId);
  if (!conv) return null;
  const previous = effectiveAutoReply(conv.autoReply, conv.pausedUntil, now);
  // Undo puts back exactly what that stop changed: the state it found (a pause with its end), the
  // deliveries it cancelled, at its own time, and the customer messages whose reply it cancelled
  // in their quiet period (pending again, with their reason: the scheduler answers them as if
  // there had been no stop). A plain resume lets the bot answer again. Neither touches "needs a
  // human": the customer still waits for a person until someone resolves it.
  const changes = undoStop ? (await store.audit.list(conv.id, 20)).filter((a) => a.action === 'stop' || a.action === 'resume') : [];
  const stopIndex = changes.findIndex((a) => a.action === 'stop');
  const stop = changes[stopIndex];
  const restore = stop ? await undoOfStop(store, conv, stop.detail, now) : null;
  // An Undo that finds nothing of its own to take back changes nothing, and says why: a plain
  // resume here would wake a bot that a colleague paused or the integration stopped.
  const refusal = undoStop ? undoRefusal(stop && restore ? { at: stop.at, newest: stopIndex === 0, restore } : null, now) : null;
  if (refusal) return { kind: 'auto_reply_state', previous, cancelledReplies: 0, restoredReplies: 0, rescheduled: null, undo: refusal };
  const undoing = undoStop && stop && restore ? { stop, restore } : null;
  const target = undoing?.restore ?? { state: 'active' as const, pausedUntil: null, messageIds: [], line: null };
  await store.conversations.setAutoReply(conv.id, target.state, target.pausedUntil);
  const restoredReplies = undoing ? await store.deliveries.restoreCancelled(conv.id, cancelledDeliveryReason('the console'), undoing.stop.at, now) : 0;
  const restored = await store.messages.restoreCancelledReplies(conv.id, target.messageIds, cancelledBeforeReplyNote('the console'));
  // A customer who wrote during the stop was left for a human only because of it: back to active,
  // the bot answers them too, and the Needs you entry their message made goes with the stop.
  const revived = undoing && target.state === 'active' && target.line !== null ? await store.messages.reviveStoppedSince(conv.id, target.line) : [];
  if (undoing && revived.length > 0) await store.conversations.clearWaitingSince(conv.id, undoing.stop.at);
  const receivedAt = [...restored, ...revived].sort((a, b) => a - b);
  // There is no resume on the wire (protocol section 4): a resume always comes from the console.
  // Resuming what was already active changed nothing, and says nothing.
  if (previous !== 'active') await commandLine(store, conv, 'resume_auto_reply', operator, now, undoStop ? { undo: true } : {});
  const undone = undoStop ? { undo: true, restored_replies: restoredReplies, restored_messages: receivedAt.length } : {};
  await store.audit.insert({ at: now, operator, action: 'resume', conversationId: conv.id, detail: JSON.stringify({ previous, ...undone }) });
  const rescheduled = receivedAt.length > 0 ? { clientId: conv.clientId, receivedAt } : null;
  return { kind: 'auto_reply_state', previous, cancelledReplies: 0, restoredReplies, rescheduled, ...(undoStop ? { undo: 'undone' as const } : {}) };
}

