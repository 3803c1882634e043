import type { StoreContract } from '../store/contract.ts';
import type { AuditItem, Operator, UndoResolveRefusal } from '../../shared/console-api.ts';
import { commandLine, UNDO_STOP_MS } from './state-commands.ts';

/** Undo of a Resolve has the stop's window: the toast shows 5 s, the service allows for a slow link. */
export const UNDO_RESOLVE_MS = UNDO_STOP_MS;

export type ResolveResult = { kind: 'resolved'; resolvedAt: number; undoable: boolean };

/** `already`: it was in Needs you, and keeps its place there; nothing was written. */
export type FlagResult = { kind: 'flagged'; needsHumanSince: number; already: boolean };

export type UndoResolveResult =
  | { kind: 'resolve_undone'; needsHumanSince: number; resolvedAt: number | null; resolvedBy: string | null }
  | { kind: 'undo_refused'; reason: UndoResolveRefusal; message: string };

/** What a Resolve found, in its audit detail: exactly what its Undo puts back. */
interface Found {
  /** Null: it was not in Needs you, the Resolve took nothing out (and there is nothing to undo). */
  needs_human_since: number | null;
  resolved_at: number | null;
  resolved_by: string | null;
  /** The Resolve's transcript line: whoever speaks after it changed the conversation. */
  line: number | null;
}

/** Clears needs_human and records who and when, keeping what it found for an Undo. */
export async function resolveConversation(store: StoreContract, conversationId: string, operator: Operator, now: number): Promise<ResolveResult | null> {
  const conv = await store.conversations.byId(conversationId);
  if (!conv || !await store.conversations.resolve(conv.id, now, operator.name)) return null;
  // The next agent to open it reads that someone handled it, and who; a no-op says nothing.
  const line = conv.needsHuman ? await commandLine(store, conv, 'resolve', operator, now) : null;
  // A flag without its time predates migration 007's backfill; the queue shows such a row by its last message.
  const found: Found = { needs_human_since: conv.needsHuman ? (conv.needsHumanSince ?? conv.lastMessageAt) : null, resolved_at: conv.resolvedAt, resolved_by: conv.resolvedBy, line };
  await store.audit.insert({ at: now, operator, action: 'resolve', conversationId: conv.id, detail: JSON.stringify(found) });
  return { kind: 'resolved', resolvedAt: now, undoable: line !== null };
}

function detailOf(a: AuditItem): Record<string, unknown> {
  try {
    const d: unknown = JSON.parse(a.detail ?? 'null');
    return typeof d === 'object' && d !== null ? (d as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/** The Resolve made at `at` (an Undo is audited as a resolve with `undo: true`), and whether it was undone. */
async function findResolve(store: StoreContract, conversationId: string, at: number): Promise<{ record: AuditItem; found: Found; undone: boolean } | null> {
  // Newest first; a conversation does not gather 50 audited actions within the undo window.
  const recent = (await store.audit.list(conversationId, 50)).flatMap((a) => (a.action === 'resolve' ? [{ record: a, d: detailOf(a) }] : []));
  const match = recent.find(({ record, d }) => record.at === at && d['undo'] !== true);
  if (!match) return null;
  const { record, d } = match;
  const found: Found = { needs_human_since: num(d['needs_human_since']), resolved_at: num(d['resolved_at']), resolved_by: typeof d['resolved_by'] === 'string' ? d['resolved_by'] : null, line: num(d['line']) };
  const undone = recent.some((r) => r.d['undo'] === true && r.d['resolved_at'] === at);
  return { record, found, undone };
}

const refused = (reason: UndoResolveRefusal, message: string): UndoResolveResult => ({ kind: 'undo_refused', reason, message });

/**
 * Puts the conversation back in Needs you as that Resolve found it, in one transaction with the
 * checks: only while nothing happened since. Anything that did (a new message that flagged it
 * again, another Resolve, someone speaking) is refused and changes nothing, because putting back
 * the old state would then erase what happened since: a newer wait, a colleague's Resolve, an
 * answer the customer already has.
 */
export async function undoResolve(store: StoreContract, conversationId: string, resolvedAt: number, operator: Operator, now: number): Promise<UndoResolveResult | null> {
  const conv = await store.conversations.byId(conversationId);
  if (!conv) return null;
  const resolve = await findResolve(store, conv.id, resolvedAt);
  const { found } = resolve ?? {};
  if (!resolve || !found || found.needs_human_since === null || found.line === null) {
    return refused('unavailable', 'There is no Resolve of this conversation at that time that took it out of Needs you: nothing was changed.');
  }
  if (resolve.undone) return refused('already_undone', 'This Resolve was already undone: the conversation is back in Needs you.');
  if (now - resolvedAt > UNDO_RESOLVE_MS) return refused('expired', `Too late to undo: a Resolve can be undone for ${UNDO_RESOLVE_MS / 1000} s. Nothing was changed.`);
  if (conv.needsHuman) return refused('needs_you_again', 'It is already back in Needs you: something new flagged it since the Resolve. Nothing was changed.');
  if (conv.resolvedAt !== resolvedAt || conv.resolvedBy !== resolve.record.operator.name) {
    return refused('resolved_again', `It was resolved again since, by ${conv.resolvedBy ?? 'someone'}: undoing would take back their Resolve. Nothing was changed.`);
  }
  if (await store.workspace.spokenAfter(conv.id, found.line)) {
    return refused('changed', 'Someone wrote in the conversation since the Resolve (the customer, staff or an operator reply): nothing was changed. Open it to see what was said.');
  }
  await store.conversations.unresolve(conv.id, found.needs_human_since, found.resolved_at, found.resolved_by);
  await commandLine(store, conv, 'undo_resolve', operator, now, { resolved_at: resolvedAt });
  await store.audit.insert({ at: now, operator, action: 'resolve', conversationId: conv.id, detail: JSON.stringify({ undo: true, resolved_at: resolvedAt, needs_human_since: found.needs_human_since }) });
  return { kind: 'resolve_undone', needsHumanSince: found.needs_human_since, resolvedAt: found.resolved_at, resolvedBy: found.resolved_by };
}

/**
 * "Needs a human" by hand: into Needs you at the end of the queue (needs_human_since = now), with
 * a line saying who did it and why. No alert: the agent who flags it is the one who would hear it;
 * colleagues see it in the list. Already flagged, it keeps its wait and nothing is written, so
 * flagging twice never moves a customer behind those who came after them.
 */
export async function flagConversation(store: StoreContract, conversationId: string, operator: Operator, note: string | null, now: number): Promise<FlagResult | null> {
  const conv = await store.conversations.byId(conversationId);
  if (!conv) return null;
  if (!await store.conversations.flagNeedsHuman(conv.id, now, 'flagged')) {
    return { kind: 'flagged', needsHumanSince: conv.needsHumanSince ?? conv.lastMessageAt, already: true };
  }
  await commandLine(store, conv, 'flag_human', operator, now, note ? { note } : {});
  await store.audit.insert({ at: now, operator, action: 'flag', conversationId: conv.id, detail: note ? JSON.stringify({ note }) : null });
  return { kind: 'flagged', needsHumanSince: now, already: false };
}
