import type { Store } from '../store/index.ts';
import type { PendingReply } from '../store/messages.ts';
import type { ActiveClient } from '../auth/client-registry.ts';
import type { MessageWriter } from '../conversations/message-service.ts';
import { toContextLine, type Engine, type EngineAnswer, type EngineRequest } from '../engines/engine.ts';
import type { ConversationRow } from '../store/conversations.ts';
import type { AutoReplyCommand } from './reply-commands.ts';
import type { Clock } from '../../shared/clock.ts';
import type { ClientSettings } from '../../shared/client-settings.ts';
import { newId } from '../store/ids.ts';
import { askEngine } from '../engines/ask.ts';
import { MAX_AUTO_REPLIES_PER_MINUTE } from './decide.ts';
import { createTurnSlicer, type TurnSlicer } from '../loop/turn-slicer.ts';
import { idleWaiters } from '../loop/quiesce.ts';

export interface SchedulerDeps {
  store: Store;
  writer: MessageWriter;
  engine: Engine;
  clock: Clock;
  lookupClient: (clientId: string) => ActiveClient | undefined;
  engineTimeoutMs: number;
  contextLines: number;
  /** A delivery was committed: wake the outbox. */
  onDelivery: () => void;
  /** The conversation's transcript changed (a reply, a handoff). */
  onChange?: (conversationId: string) => void;
  /** A handoff newly flagged the conversation needs_human, after the write committed. */
  onAlert?: (conversationId: string, reason: 'handoff') => void;
  log: (line: string) => void;
  /** Runs the due conversations' answers a few per turn (shared with the outbox); own one when absent. */
  slicer?: TurnSlicer;
}

interface Waiting {
  clientId: string;
  first: number;
  last: number;
  /** Bumped by every new pending message; an answer made for an older generation is dropped. */
  generation: number;
  /** The per-minute cap is spent: no answer before this time. */
  notBefore: number;
  cancel: (() => void) | null;
}

export function isStale(p: PendingReply, settings: ClientSettings, now: number): boolean {
  if (settings.staleMinutes <= 0) return false;
  const at = p.createTimestamp !== null ? p.createTimestamp * 1000 : p.receivedAt;
  return now - at > settings.staleMinutes * 60_000;
}

/**
 * What one reply answers. In a group each customer gets a reply of their own (section 6), in the
 * order they first asked: one customer's message is never marked answered by another's reply.
 */
export function batchesOf(pending: PendingReply[], isGroup: boolean): PendingReply[][] {
  if (!isGroup) return [pending];
  const byCustomer = new Map<string | null, PendingReply[]>();
  for (const p of pending) {
    const batch = byCustomer.get(p.fromUserId);
    if (batch) batch.push(p);
    else byCustomer.set(p.fromUserId, [p]);
  }
  return [...byCustomer.values()];
}

/**
 * How many of `wanted` replies fit under the per-minute cap now, and when the next slot opens for
 * the rest (null: all fit). `recent` holds the times of the replies of the last minute, oldest first.
 */
export function capacity(recent: number[], wanted: number, now: number): { now: number; nextSlotAt: number | null } {
  const fit = Math.max(0, Math.min(wanted, MAX_AUTO_REPLIES_PER_MINUTE - recent.length));
  if (fit === wanted) return { now: fit, nextSlotAt: null };
  const all = [...recent, ...new Array<number>(fit).fill(now)];
  // A reply counts while created_at >= now - 60 s (as at ingest): its slot frees 1 ms later.
  return { now: fit, nextSlotAt: all[all.length - MAX_AUTO_REPLIES_PER_MINUTE]! + 60_001 };
}

/** The message auto_dialog receivers get, per section 7 (signed at each attempt). */
export function deliveryInfo(replyMsgId: string, conversationId: string, pending: PendingReply[], groupId: string | null, customerId: string | null, settings: ClientSettings, content: string, now: number): Record<string, unknown> {
  const asker = pending.at(-1)!.fromUserId ?? customerId;
  return {
    msg_id: replyMsgId,
    reply_to: pending.map((p) => p.msgId),
    conversation_id: conversationId,
    ...(groupId ? { group_id: groupId } : {}),
    ...(settings.boundAccount ? { from_user_id: settings.boundAccount } : {}),
    // A group message may name no sender (section 2 needs only group_id): the reply then goes to
    // the group with no to_user_id rather than a null the outbox would refuse (a dead delivery).
    ...(((groupId ? asker : customerId) ?? asker) ? { to_user_id: (groupId ? asker : customerId) ?? asker } : {}),
    ...(groupId && asker ? { at_list: [asker] } : {}),
    content,
    message_type: 1,
    event_type: 'auto_dialog',
    from_user_type: 4,
    create_timestamp: Math.floor(now / 1000),
  };
}

/** Asks the engine for an auto reply; a failure (an error, the time-out) is a handoff with the fallback text, never a silent drop. */
export async function askOrHandoff(engine: Engine, request: EngineRequest, timeoutMs: number, clock: Clock): Promise<EngineAnswer> {
  try {
    return await askEngine(engine, request, timeoutMs, clock);
  } catch (error) {
    // An engine failure is a handoff, never a silent drop: a human sees needs_human.
    return { content: request.fallbackText, handoff: true, confidence: null, sources: [], cause: (error as Error).message };
  }
}

/** The write that commits one batch's answer at `at`, with the delivery auto_dialog receivers get (if there is text and a send_url). */
export function autoReplyCommand(conv: Pick<ConversationRow, 'id' | 'groupId' | 'customerId'>, client: ActiveClient, batch: PendingReply[], result: EngineAnswer, engineName: string, at: number): AutoReplyCommand {
  const replyMsgId = newId('reply');
  const content = result.handoff ? (client.settings.fallbackText ?? null) : result.content;
  const sendUrl = batch.at(-1)!.sendUrl ?? client.settings.sendUrl ?? null;
  return {
    kind: 'auto_reply',
    conversationId: conv.id,
    clientId: client.id,
    messageIds: batch.map((p) => p.id),
    replyTo: batch.map((p) => p.msgId),
    replyMsgId,
    engine: result.engine ?? engineName,
    answer: result,
    delivery: content && sendUrl ? { sendUrl, messageInfo: JSON.stringify(deliveryInfo(replyMsgId, conv.id, batch, conv.groupId, conv.customerId, client.settings, content, at)) } : null,
    now: at,
  };
}

/**
 * When to answer: after a quiet period following the last pending customer message (capped from
 * the first), all pending messages together in one engine call. A message arriving while the
 * engine works makes that answer obsolete; the new message's own timer answers everything.
 * Pending messages live in the database, so a restart re-arms them.
 */
export function createReplyScheduler(deps: SchedulerDeps) {
  const waiting = new Map<string, Waiting>();
  let stopped = false;
  const slicer = deps.slicer ?? createTurnSlicer();
  /** Answers being made: from the slicer's turn until the reply (or the decision to drop it) is committed. */
  let firing = 0;
  const fired = idleWaiters();

  function arm(conversationId: string, w: Waiting): void {
    const settings = deps.lookupClient(w.clientId)?.settings;
    const quiet = (settings?.quietSeconds ?? 2) * 1000;
    const cap = (settings?.quietMaxSeconds ?? 10) * 1000;
    const deadline = Math.max(Math.min(w.last + quiet, w.first + Math.max(cap, 0)), w.notBefore);
    w.cancel?.();
    w.cancel = deps.clock.after(deadline - deps.clock.now(), () => {
      // Many quiet periods end together in a burst: each due conversation queues, and its reads
      // and engine request run a few per turn. A message arriving while it is queued cancels it
      // here as it would cancel the timer, so the quiet period restarts exactly as before.
      w.cancel = slicer.run(() => {
        w.cancel = null;
        firing++;
        fire(conversationId)
          .catch((error: unknown) => deps.log(`auto reply for ${conversationId} failed: ${(error as Error).message}`))
          .finally(() => {
            firing--;
            fired.release();
          });
      });
    });
  }

  async function answer(clientId: string, settings: ClientSettings, conversationId: string, uptoId: number, isGroup: boolean): Promise<EngineAnswer> {
    // The engine thread reads the transcript itself (the messages answered were committed before
    // their timer was armed); in-process, it is read here as before.
    const lines = deps.engine.readsContext
      ? { context: [], contextOf: { conversationId, uptoId, lines: deps.contextLines } }
      : { context: deps.store.messages.context(conversationId, uptoId, deps.contextLines).map(toContextLine) };
    return askOrHandoff(deps.engine, { purpose: 'auto_reply', clientId, channel: 'im', isGroup, ...lines, fallbackText: settings.fallbackText ?? '' }, deps.engineTimeoutMs, deps.clock);
  }

  async function fire(conversationId: string): Promise<void> {
    const w = waiting.get(conversationId);
    if (!w || stopped) return;
    const generation = w.generation;
    const done = (): void => {
      if (waiting.get(conversationId) === w && w.generation === generation) waiting.delete(conversationId);
    };
    const client = deps.lookupClient(w.clientId);
    const pending = deps.store.messages.pendingReplies(conversationId);
    const conv = deps.store.conversations.byId(conversationId);
    if (!client || !conv || pending.length === 0) return done();
    const now = deps.clock.now();
    const stale = pending.filter((p) => isStale(p, client.settings, now));
    if (stale.length > 0) {
      await deps.writer.submit({ kind: 'settle_replies', messageIds: stale.map((p) => p.id), outcome: 'stale', note: 'waited past the stale limit (was the service down?)' });
    }
    const fresh = pending.filter((p) => !stale.includes(p));
    if (fresh.length === 0) return done();

    const isGroup = conv.groupId !== null;
    const batches = batchesOf(fresh, isGroup);
    // A group can need several replies at once: the ones past the per-minute cap wait for a slot.
    const room = isGroup ? capacity(deps.store.messages.autoReplyTimesSince(conversationId, now - 60_000), batches.length, now) : { now: 1, nextSlotAt: null };
    const ready = batches.slice(0, room.now);
    const results = await Promise.all(ready.map((batch) => answer(client.id, client.settings, conversationId, batch.at(-1)!.id, isGroup)));
    if (w.generation !== generation || stopped) return; // a newer message arrived: its timer answers all

    let delivered = false;
    let alerted = false;
    for (const [i, batch] of ready.entries()) {
      const result = results[i]!;
      const committed = await deps.writer.submit(autoReplyCommand(conv, client, batch, result, deps.engine.name, deps.clock.now()));
      if (committed?.kind === 'auto_reply' && committed.deliveryId !== null) delivered = true;
      if (committed?.kind === 'auto_reply' && committed.alert) alerted = true;
    }
    if (delivered) deps.onDelivery();
    deps.onChange?.(conversationId);
    if (alerted) deps.onAlert?.(conversationId, 'handoff');
    if (room.nextSlotAt === null || stopped) return done();
    w.notBefore = room.nextSlotAt;
    arm(conversationId, w);
  }

  return {
    /** A customer message was stored with a scheduled reply. */
    add(conversationId: string, clientId: string, receivedAt: number): void {
      if (stopped) return;
      let w = waiting.get(conversationId);
      if (!w) {
        w = { clientId, first: receivedAt, last: receivedAt, generation: 0, notBefore: 0, cancel: null };
        waiting.set(conversationId, w);
      }
      w.last = Math.max(w.last, receivedAt);
      w.generation++;
      arm(conversationId, w);
    },
    /** After a restart: every message still pending gets its quiet period again (or at once, if it ran out). */
    restore(): number {
      const pending = deps.store.messages.pendingReplies();
      for (const p of pending) {
        let w = waiting.get(p.conversationId);
        if (!w) {
          w = { clientId: p.clientId, first: p.receivedAt, last: p.receivedAt, generation: 1, notBefore: 0, cancel: null };
          waiting.set(p.conversationId, w);
        }
        w.last = Math.max(w.last, p.receivedAt);
      }
      for (const [id, w] of waiting) arm(id, w);
      return pending.length;
    },
    waitingConversations: () => waiting.size,
    /** Answers in the making (engine call, commit); for `RunningService.quiesce`. */
    firing: () => firing,
    /** Resolves when the next answer in the making ends. */
    fireEnded: (): Promise<void> => fired.wait(),
    stop(): void {
      stopped = true;
      for (const w of waiting.values()) w.cancel?.();
      waiting.clear();
    },
  };
}

export type ReplyScheduler = ReturnType<typeof createReplyScheduler>;
