import type pg from 'pg';
import type { ActiveClient } from '../auth/client-registry.ts';
import { toContextLine, type Engine, type EngineAnswer } from '../engines/engine.ts';
import type { Clock } from '../../shared/clock.ts';
import type { PendingReply } from '../store/messages.ts';
import { lockConversation, pgReplyStore } from '../store/pg/reply-queries.ts';
import { pgReplyLeases, type ClaimedReply, type FinishResult } from '../store/pg/leases/pg-reply-leases.ts';
import { inPgTransaction } from '../store/pg/transaction.ts';
import { commitAutoReply, settleReplies, type AutoReplyResult, type SettleCommand } from './reply-commands.ts';
import { askOrHandoff, autoReplyCommand, batchesOf, capacity, isStale } from './reply-scheduler.ts';

export interface FireDeps {
  pool: pg.Pool;
  engine: Engine;
  clock: Clock;
  lookupClient: (clientId: string) => ActiveClient | undefined;
  engineTimeoutMs: number;
  contextLines: number;
  onDelivery: () => void;
  onChange?: (conversationId: string) => void;
  onAlert?: (conversationId: string, reason: 'handoff') => void;
  log: (line: string) => void;
}

/** A client a node does not know yet is looked for again this often, for up to a minute after the timer fell due. */
const UNKNOWN_CLIENT_RETRY_MS = 2_000;
const UNKNOWN_CLIENT_PATIENCE_MS = 60_000;

/**
 * What became of one claimed timer: answered (its replies committed with the timer's end),
 * deferred (the per-minute cap: no reply now), dropped (a newer message or another node took
 * it: nothing committed), or closed (nothing left to answer: the timer ended).
 */
export type FireResult = 'answered' | 'deferred' | 'closed' | Exclude<FinishResult, 'done'>;

/** Ends the timer with nothing to answer (settling `stale` messages with it), unless a newer message or another node has it. */
async function close(deps: FireDeps, claim: ClaimedReply, stale: PendingReply[]): Promise<FireResult> {
  const finished = await inPgTransaction(deps.pool, async (tx) => {
    await lockConversation(tx, claim.conversationId);
    if (stale.length > 0) await settleReplies(pgReplyStore(tx), staleCommand(stale));
    return pgReplyLeases(tx).finishReply(claim.conversationId, claim.lease, claim.lastMessageId);
  });
  return finished === 'done' ? 'closed' : finished;
}

/**
 * Answers one claimed timer by reply-scheduler.ts's rules (its fire): stale messages settled,
 * one reply per customer in a group, the per-minute cap, an engine failure a handoff. Only the
 * messages up to the claim's are answered: a newer one has a quiet period of its own, and ends
 * this answer at finishReply. The engine is asked outside any transaction; the replies, their
 * deliveries and the timer's end commit together, or none of them (finishReply runs first in that
 * transaction and holds the timer's row until the commit).
 */
export async function fireClaim(deps: FireDeps, claim: ClaimedReply): Promise<FireResult> {
  const id = claim.conversationId;
  const reads = pgReplyStore(deps.pool);
  const conv = await reads.conversations.byId(id);
  const pending = (await reads.messages.pendingReplies(id)).filter((p) => p.id <= claim.lastMessageId);
  const client = pending.length > 0 ? deps.lookupClient(pending[0]!.clientId) : undefined;
  const now = deps.clock.now();
  if (conv && pending.length > 0 && !client && now - claim.dueAt < UNKNOWN_CLIENT_PATIENCE_MS) {
    // A client added a moment ago on another machine: this node's copy of the clients catches up
    // within a second, so the timer fires again shortly (on any node) rather than ending unanswered.
    return (await pgReplyLeases(deps.pool).deferReply(id, claim.lease, now + UNKNOWN_CLIENT_RETRY_MS)) ? 'deferred' : 'lost';
  }
  if (!conv || !client) {
    if (pending.length > 0) deps.log(`auto reply for ${id}: client ${pending[0]!.clientId} unknown here for a minute; its timer ends`);
    return close(deps, claim, []);
  }
  const stale = pending.filter((p) => isStale(p, client.settings, now));
  const fresh = pending.filter((p) => !stale.includes(p));
  if (fresh.length === 0) return close(deps, claim, stale);
  if (stale.length > 0) await inPgTransaction(deps.pool, (tx) => settleReplies(pgReplyStore(tx), staleCommand(stale)));

  const isGroup = conv.groupId !== null;
  const batches = batchesOf(fresh, isGroup);
  const room = isGroup ? capacity(await reads.messages.autoReplyTimesSince(id, now - 60_000), batches.length, now) : { now: 1, nextSlotAt: null };
  const ready = batches.slice(0, room.now);
  if (ready.length === 0) {
    // Any node fires it again when the slot opens.
    return (await pgReplyLeases(deps.pool).deferReply(id, claim.lease, room.nextSlotAt!)) ? 'deferred' : 'lost';
  }
  const answers = await Promise.all(ready.map((batch) => ask(deps, client, id, batch.at(-1)!.id, isGroup)));

  const done = await inPgTransaction(deps.pool, async (tx) => {
    const store = pgReplyStore(tx);
    const leases = pgReplyLeases(tx);
    await lockConversation(tx, id);
    // The timer's end first: a newer message (stale: the timer is released for its time) or
    // another node's claim (lost) means this answer is not stored, and nothing else is written.
    const finished = await leases.finishReply(id, claim.lease, claim.lastMessageId);
    const committed: AutoReplyResult[] = [];
    if (finished !== 'done') return { finished, committed };
    let at = now;
    for (const [i, batch] of ready.entries()) {
      at = deps.clock.now();
      committed.push(await commitAutoReply(store, autoReplyCommand(conv, client, batch, answers[i]!, deps.engine.name, at)));
    }
    if (room.nextSlotAt !== null) {
      // The customers past the cap keep their messages pending: a timer of their own, when a slot
      // frees after the replies just made (made later than the fire began, while the engine worked).
      const slot = capacity(await store.messages.autoReplyTimesSince(id, at - 60_000), batches.length - ready.length, at).nextSlotAt ?? at;
      await leases.scheduleReply(id, slot, claim.lastMessageId);
    }
    return { finished, committed };
  });
  if (done.finished !== 'done') return done.finished;
  if (done.committed.some((c) => c.deliveryId !== null)) deps.onDelivery();
  deps.onChange?.(id);
  if (done.committed.some((c) => c.alert)) deps.onAlert?.(id, 'handoff');
  return 'answered';
}

const staleCommand = (stale: PendingReply[]): SettleCommand => ({
  kind: 'settle_replies',
  messageIds: stale.map((p) => p.id),
  outcome: 'stale',
  note: 'waited past the stale limit (was the service down?)',
});

async function ask(deps: FireDeps, client: ActiveClient, conversationId: string, uptoId: number, isGroup: boolean): Promise<EngineAnswer> {
  // Read here even for an engine that reads its own context: the engine thread reads SQLite, not this database.
  const context = (await pgReplyStore(deps.pool).messages.context(conversationId, uptoId, deps.contextLines)).map(toContextLine);
  return askOrHandoff(deps.engine, { purpose: 'auto_reply', clientId: client.id, channel: 'im', isGroup, context, fallbackText: client.settings.fallbackText ?? '' }, deps.engineTimeoutMs, deps.clock);
}
