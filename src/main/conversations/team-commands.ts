import type { StoreContract } from '../store/contract.ts';
import type { Reader } from '../store/team.ts';
import type { ArrivedEntry, DraftBase, Operator } from '../../shared/console-api.ts';
import { assertNever } from '../../shared/assert-never.ts';
import { auditDetail } from './workspace-commands.ts';

/**
 * The team workflow's writes (protocol v1.2, "Team workflow"), run by the writer thread inside its
 * group transaction: assignment by hand, auto-assignment's claim, an offline agent's conversations
 * back to the queue, private notes and per-account read markers.
 */
export type TeamCommand =
  /** By hand: to an account, or nobody (null). */
  | { kind: 'assign'; conversationId: string; agentId: string | null; operator: Operator & { address?: string | null }; now: number }
  /** Auto-assignment: only if it still needs a human, nobody has it and the agent is under `capacity`. */
  | { kind: 'claim'; conversationId: string; agentId: string; capacity: number; now: number }
  /** The agent has been offline too long: what still needs a human goes back to the queue. */
  /** `why` goes into each audit row (an agent offline too long, or disabled). */
  | { kind: 'return_to_queue'; agentId: string; why?: string; now: number }
  | { kind: 'note'; conversationId: string; msgId: string; operator: Operator & { address?: string | null }; content: string; mentions: string[]; base: DraftBase | null; force: boolean; now: number }
  /** `reader` null: a console with no account yet, whose marker is the shared one. */
  | { kind: 'mark_read'; conversationId: string; upToId: number; reader?: Reader | null };

/** A reply or note whose draft's base is behind: nothing was written. */
export type ConflictResult = { kind: 'conversation_changed'; arrived: ArrivedEntry[] };

export type TeamResult =
  | { kind: 'assigned'; previous: string | null; changed: boolean }
  | { kind: 'claimed'; claimed: boolean }
  | { kind: 'returned'; ids: string[] }
  | { kind: 'noted'; noteId: number }
  | { kind: 'unread'; unread: number }
  | ConflictResult;

/** What arrived after a draft's base that its author has not seen; empty when nothing did, or when they send anyway. */
export async function arrivedAfter(store: StoreContract, conversationId: string, base: DraftBase | null | undefined, force: boolean, authorId: string): Promise<ArrivedEntry[]> {
  if (!base || force) return [];
  return await store.team.arrivedSince(conversationId, base, authorId);
}

async function assign(store: StoreContract, c: Extract<TeamCommand, { kind: 'assign' }>): Promise<TeamResult | null> {
  const previous = await store.team.assigneeOf(c.conversationId);
  if (previous === undefined) return null;
  if (previous === c.agentId) return { kind: 'assigned', previous, changed: false };
  await store.team.assign(c.conversationId, c.agentId, c.now);
  await store.audit.insert({ at: c.now, operator: c.operator, action: 'assign', conversationId: c.conversationId, detail: auditDetail({ from: previous, to: c.agentId }) });
  return { kind: 'assigned', previous, changed: true };
}

async function note(store: StoreContract, c: Extract<TeamCommand, { kind: 'note' }>): Promise<TeamResult | null> {
  if (await store.team.assigneeOf(c.conversationId) === undefined) return null;
  const arrived = await arrivedAfter(store, c.conversationId, c.base, c.force, c.operator.id);
  if (arrived.length > 0) return { kind: 'conversation_changed', arrived };
  const noteId = await store.team.insertNote({
    conversationId: c.conversationId,
    msgId: c.msgId,
    afterMessageId: await store.workspace.latestMessageId(c.conversationId),
    afterReplyId: await store.team.latestReplyId(c.conversationId),
    author: c.operator,
    content: c.content,
    mentions: c.mentions,
    now: c.now,
  });
  const detail = auditDetail({ msg_id: c.msgId, content: c.content, ...(c.mentions.length ? { mentions: c.mentions.join(' ') } : {}), ...(c.force && c.base ? { sent_anyway: true } : {}) });
  await store.audit.insert({ at: c.now, operator: c.operator, action: 'note', conversationId: c.conversationId, detail });
  return { kind: 'noted', noteId };
}

export async function executeTeamCommand(store: StoreContract, c: TeamCommand): Promise<TeamResult | null> {
  switch (c.kind) {
    case 'assign':
      return await assign(store, c);
    case 'claim': {
      const claimed = await store.team.claim(c.conversationId, c.agentId, c.capacity, c.now);
      if (claimed) await store.audit.insert({ at: c.now, operator: null, action: 'assign', conversationId: c.conversationId, detail: auditDetail({ from: null, to: c.agentId, by: 'auto-assignment' }) });
      return { kind: 'claimed', claimed };
    }
    case 'return_to_queue': {
      const ids = await store.team.returnToQueue(c.agentId);
      for (const id of ids) {
        await store.audit.insert({ at: c.now, operator: null, action: 'assign', conversationId: id, detail: auditDetail({ from: c.agentId, to: null, by: c.why ?? 'offline agent, back to the queue' }) });
      }
      return { kind: 'returned', ids };
    }
    case 'note':
      return await note(store, c);
    case 'mark_read': {
      if (c.reader) {
        if (await store.team.assigneeOf(c.conversationId) === undefined) return null;
        return { kind: 'unread', unread: await store.team.markRead(c.reader, c.conversationId, c.upToId) };
      }
      const unread = await store.conversations.markRead(c.conversationId, c.upToId);
      return unread === undefined ? null : { kind: 'unread', unread };
    }
    default:
      return assertNever(c, 'team command');
  }
}
