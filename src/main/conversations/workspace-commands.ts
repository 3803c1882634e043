import type { StoreContract } from '../store/contract.ts';
import type { NewAudit } from '../store/audit.ts';
import type { EngineAnswer } from '../engines/engine.ts';
import type { Operator } from '../../shared/console-workspace.ts';
import type { DraftBase } from '../../shared/console-team.ts';
import { effectiveAutoReply } from '../../shared/conversation.ts';
import { assertNever } from '../../shared/assert-never.ts';
import { flagConversation, resolveConversation, undoResolve, type FlagResult, type ResolveResult, type UndoResolveResult } from './resolve-commands.ts';
import { arrivedAfter, type ConflictResult } from './team-commands.ts';

/** An operator reply (protocol section 7), its delivery built on the main thread. */
export interface OperatorReplyCommand {
  kind: 'operator_reply';
  conversationId: string;
  clientId: string;
  operator: Operator;
  replyMsgId: string;
  content: string;
  replyTo: string[];
  sendUrl: string;
  /** The delivery's message_info as JSON text; signed at each attempt. */
  messageInfo: string;
  /** The client's pause after a staff message (0: no pause). */
  pauseMs: number;
  /** The draft's base (team workflow): refused if a customer or a colleague spoke since, unless `force`. */
  base?: DraftBase | null;
  force?: boolean;
  /** Team mode: the reply takes a conversation nobody has for its author. */
  takeIfFree?: boolean;
  now: number;
}

/** A suggestion asked for from the console: stored with the agent's instruction, no message written. */
export interface ConsoleSuggestionCommand {
  kind: 'console_suggestion';
  conversationId: string;
  /** The customer message it answers. */
  messageId: number;
  messageMsgId: string;
  suggestionMsgId: string;
  engine: string;
  answer: EngineAnswer;
  instruction: string | null;
  operator: Operator;
  now: number;
}

export type WorkspaceCommand =
  | OperatorReplyCommand
  | ConsoleSuggestionCommand
  | { kind: 'resolve'; conversationId: string; operator: Operator; now: number }
  /** `resolvedAt` names the Resolve to take back (see resolve-commands.ts). */
  | { kind: 'undo_resolve'; conversationId: string; resolvedAt: number; operator: Operator; now: number }
  /** "Needs a human" by hand; `note`: why, trimmed, or null. */
  | { kind: 'flag'; conversationId: string; note: string | null; operator: Operator; now: number }
  /** `owner`: the installation's owner says who they are (id and name); an agent changes only their name. */
  | { kind: 'set_operator'; operator: Operator & { address?: string | null }; owner: boolean; now: number }
  | { kind: 'audit'; entry: NewAudit };

export type WorkspaceResult =
  /** `assigned`: the reply took the conversation for its author (it had no assignee). */
  | { kind: 'operator_reply'; replyId: number; deliveryId: number; assigned: boolean }
  | ConflictResult
  | ResolveResult
  | UndoResolveResult
  | FlagResult
  | { kind: 'done' };

/** The audit's detail: short, so a long reply does not make the audit a second transcript. */
export function auditDetail(fields: Record<string, unknown>): string {
  const clipped = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, typeof v === 'string' && v.length > 200 ? `${v.slice(0, 199)}…` : v]));
  return JSON.stringify(clipped);
}

/**
 * Stored as a reply of kind operator right after the conversation's latest message, with its
 * delivery in the same transaction. It pauses auto-reply like a staff message in the IM (a stopped
 * conversation stays stopped) and clears needs_human. Auto replies still waiting for a retry are
 * made due now, so the outbox's usual re-check cancels them at once instead of holding this
 * answer behind their back-off.
 */
async function operatorReply(store: StoreContract, c: OperatorReplyCommand): Promise<WorkspaceResult | null> {
  const conv = await store.conversations.byId(c.conversationId);
  if (!conv) return null;
  // Checked in the write's own transaction: nothing can slip in between the check and the reply.
  const arrived = await arrivedAfter(store, conv.id, c.base, c.force ?? false, c.operator.id);
  if (arrived.length > 0) return { kind: 'conversation_changed', arrived };
  const replyId = await store.messages.insertReply({
    conversationId: conv.id,
    kind: 'operator',
    msgId: c.replyMsgId,
    replyTo: c.replyTo,
    afterMessageId: await store.workspace.latestMessageId(conv.id),
    content: c.content,
    handoff: false,
    engine: 'operator',
    confidence: null,
    sources: [],
    operator: c.operator,
    createdAt: c.now,
  });
  const deliveryId = await store.deliveries.insert({
    kind: 'operator',
    replyId,
    replyMsgId: c.replyMsgId,
    conversationId: conv.id,
    clientId: c.clientId,
    sendUrl: c.sendUrl,
    messageInfo: c.messageInfo,
    state: 'pending',
    nextAttemptAt: c.now,
    createdAt: c.now,
  });
  if (conv.channel === 'im') {
    const state = effectiveAutoReply(conv.autoReply, conv.pausedUntil, c.now);
    if (state !== 'stopped' && c.pauseMs > 0) await store.conversations.setAutoReply(conv.id, 'paused', c.now + c.pauseMs);
    if (state === 'stopped' || c.pauseMs > 0) await store.deliveries.autoDueNow(conv.id, c.now);
  }
  await store.conversations.clearNeedsHuman(conv.id);
  await store.conversations.touch(conv.id, 1, c.now);
  await store.audit.insert({ at: c.now, operator: c.operator, action: 'reply', conversationId: conv.id, detail: auditDetail({ msg_id: c.replyMsgId, content: c.content, ...(c.force && c.base ? { sent_anyway: true } : {}) }) });
  // Only a conversation nobody has: a colleague's stays theirs (the conditional update decides, not a read before it).
  const assigned = c.takeIfFree === true && await store.team.takeIfFree(conv.id, c.operator.id, c.now);
  if (assigned) await store.audit.insert({ at: c.now, operator: c.operator, action: 'assign', conversationId: conv.id, detail: auditDetail({ from: null, to: c.operator.id, by: 'reply' }) });
  return { kind: 'operator_reply', replyId, deliveryId, assigned };
}

async function consoleSuggestion(store: StoreContract, c: ConsoleSuggestionCommand): Promise<WorkspaceResult | null> {
  if (!await store.conversations.byId(c.conversationId)) return null;
  await store.messages.insertReply({
    conversationId: c.conversationId,
    kind: 'suggestion',
    msgId: c.suggestionMsgId,
    replyTo: [c.messageMsgId],
    afterMessageId: c.messageId,
    content: c.answer.content,
    handoff: c.answer.handoff,
    engine: c.engine,
    confidence: c.answer.confidence,
    sources: c.answer.sources,
    // An answer's cause says how it was made when that matters (matched by words only: embeddings down).
    cause: c.answer.handoff ? (c.answer.cause ?? 'no confident answer') : (c.answer.cause ?? null),
    instruction: c.instruction,
    createdAt: c.now,
  });
  await store.audit.insert({
    at: c.now,
    operator: c.operator,
    action: 'assist',
    conversationId: c.conversationId,
    detail: auditDetail({ msg_id: c.messageMsgId, suggestion: c.suggestionMsgId, ...(c.instruction ? { instruction: c.instruction } : {}) }),
  });
  return { kind: 'done' };
}

/** Runs one workspace command inside the writer's current group transaction; null: no such conversation. */
export async function executeWorkspaceCommand(store: StoreContract, c: WorkspaceCommand): Promise<WorkspaceResult | null> {
  switch (c.kind) {
    case 'operator_reply':
      return await operatorReply(store, c);
    case 'console_suggestion':
      return await consoleSuggestion(store, c);
    case 'resolve':
      return await resolveConversation(store, c.conversationId, c.operator, c.now);
    case 'undo_resolve':
      return await undoResolve(store, c.conversationId, c.resolvedAt, c.operator, c.now);
    case 'flag':
      return await flagConversation(store, c.conversationId, c.operator, c.note, c.now);
    case 'set_operator': {
      let previous: Operator | null = null;
      if (c.owner) {
        previous = (await store.accounts.setOwner({ id: c.operator.id, name: c.operator.name, now: c.now })).previous;
        // The console read before it had a name, on the shared marker: that reading is now the owner's.
        if (!previous) await store.team.adoptSharedMarkers(c.operator.id);
      }
      else {
        previous = await store.accounts.get(c.operator.id);
        await store.accounts.rename(c.operator.id, c.operator.name, c.now);
      }
      const detail = previous ? auditDetail({ previous: `${previous.name} (${previous.id})` }) : null;
      await store.audit.insert({ at: c.now, operator: c.operator, action: 'operator', conversationId: null, detail });
      return { kind: 'done' };
    }
    case 'audit':
      await store.audit.insert(c.entry);
      return { kind: 'done' };
    default:
      return assertNever(c, 'workspace command');
  }
}
