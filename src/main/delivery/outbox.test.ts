import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSecretKey } from 'node:crypto';
import { openDatabase } from '../store/db.ts';
import { createStore, type Store } from '../store/index.ts';
import { executeWrite, type WriteCommand, type WriteResult } from '../conversations/write-commands.ts';
import type { MessageWriter } from '../conversations/message-service.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';
import { manualClock } from '../../shared/clock.ts';
import { createOutbox, type Outbox } from './outbox.ts';
import type { Delivery } from './sender.ts';
import type { SendResult } from './retry-policy.ts';
import { emptyWriteStats } from '../store/write-queue.ts';

/**
 * A writer that commits to the test's store only when the test lets it: the outbox's record of an
 * attempt can be held, as a busy writer thread holds it.
 */
function heldWriter(store: Store) {
  const held: Array<() => void> = [];
  let holding = false;
  const writer = {
    submit(command: WriteCommand): Promise<WriteResult> {
      return new Promise((resolve) => {
        const commit = (): void => resolve(executeWrite(store, command));
        if (holding && command.kind === 'delivery_attempt') held.push(commit);
        else queueMicrotask(commit);
      });
    },
    send() {},
    drain: () => Promise.resolve(),
    close: () => Promise.resolve(),
    stats: emptyWriteStats(),
  } satisfies MessageWriter;
  return {
    writer,
    hold: () => (holding = true),
    /** Commits every held record. */
    release: () => {
      holding = false;
      for (const commit of held.splice(0)) commit();
    },
    held: () => held.length,
  };
}

/** A receiver that answers at once: the test sees each request as the outbox makes it. */
function receiver() {
  const sent: string[] = [];
  const send = (d: Delivery): Promise<SendResult> => {
    sent.push(d.idempotencyKey);
    return Promise.resolve({ kind: 'response', status: 200, retryAfter: null });
  };
  return { send, sent };
}

function setup(concurrency: number) {
  const store = createStore(openDatabase(':memory:'));
  store.clients.create('a', DEFAULT_CLIENT_SETTINGS, 0);
  const clock = manualClock();
  const client = { id: 'a', enabled: true, settings: DEFAULT_CLIENT_SETTINGS, keys: [createSecretKey(Buffer.from('s'.repeat(32)))] };
  const w = heldWriter(store);
  const r = receiver();
  const outbox = createOutbox({ store, writer: w.writer, send: r.send, clock, lookupClient: () => client, concurrency, pollMs: 1000, log: () => {} });
  const add = (conversationId: string): string => {
    if (!store.conversations.byId(conversationId)) {
      store.conversations.create({ id: conversationId, clientId: 'a', channel: 'im', peer: `u:${conversationId}`, groupId: null, customerId: conversationId, autoReply: 'active', now: 0 });
    }
    const msgId = `reply-${conversationId}-${Math.random().toString(36).slice(2)}`;
    const info = { msg_id: msgId, reply_to: ['m'], conversation_id: conversationId, to_user_id: conversationId, content: 'hi', message_type: 1, event_type: 'auto_dialog', from_user_type: 4, create_timestamp: 0 };
    const replyId = store.messages.insertReply({ conversationId, kind: 'auto', msgId, replyTo: ['m'], afterMessageId: 0, content: 'hi', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: clock.now() });
    store.deliveries.insert({ replyId, replyMsgId: msgId, conversationId, clientId: 'a', sendUrl: 'http://receiver.test/hook', messageInfo: JSON.stringify(info), state: 'pending', nextAttemptAt: clock.now(), createdAt: clock.now() });
    return msgId;
  };
  return { store, clock, outbox, add, ...w, sent: r.sent };
}

/**
 * Resolves once the outbox has nothing in motion but what the test holds itself (`parked`: records
 * held by the writer, requests held by the receiver, attempts queued in a hand-run slicer): no scan
 * asked for, every other delivery taken has been recorded. Waits on the outbox's own count, a turn
 * at a time, rather than for a fixed number of turns; fails if it never gets there.
 */
async function outboxIdle(outbox: Outbox, parked: () => number = () => 0): Promise<void> {
  for (let turn = 0; outbox.busy() > parked() || turn === 0; turn++) {
    if (turn > 10_000) throw new Error(`the outbox is still busy: ${outbox.busy()} in motion, ${parked()} held by the test`);
    await new Promise((r) => setImmediate(r));
  }
}

test('a delivery whose receiver answered frees its slot while its record waits for the writer', async () => {
  const o = setup(1);
  const first = o.add('c1');
  const second = o.add('c2');
  o.hold();
  o.outbox.start();
  await outboxIdle(o.outbox, o.held);
  // No record is committed yet, and the clock never moved: no poll fired.
  assert.deepEqual(o.sent, [first, second], 'the second delivery did not wait for the first record');
  assert.equal(o.held(), 2, 'both records wait for the writer');
  o.release();
  await outboxIdle(o.outbox, o.held);
  assert.equal(o.held(), 0);
  assert.deepEqual(o.sent, [first, second], 'each sent once');
  assert.equal(o.store.deliveries.countByState().sent, 2);
  await o.outbox.stop();
});

test('a delivery waiting for its record is not taken again, however often the outbox is woken', async () => {
  const o = setup(4);
  const only = o.add('c1');
  o.hold();
  o.outbox.start();
  await outboxIdle(o.outbox, o.held);
  for (let i = 0; i < 5; i++) o.outbox.notify();
  await outboxIdle(o.outbox, o.held);
  assert.deepEqual(o.sent, [only]);
  assert.equal(o.outbox.inFlight(), 1, 'still in flight until recorded');
  o.release();
  await outboxIdle(o.outbox, o.held);
  assert.deepEqual(o.sent, [only]);
  assert.equal(o.outbox.inFlight(), 0);
  await o.outbox.stop();
});

test('the next reply of a conversation waits until the earlier one is recorded as sent', async () => {
  const o = setup(4);
  const first = o.add('c1');
  const second = o.add('c1');
  o.hold();
  o.outbox.start();
  await outboxIdle(o.outbox, o.held);
  assert.deepEqual(o.sent, [first], 'in order per conversation');
  o.release();
  await outboxIdle(o.outbox, o.held);
  assert.deepEqual(o.sent, [first, second]);
  await o.outbox.stop();
});

test('a committed delivery goes at once when the outbox is notified, not at the next poll', async () => {
  const o = setup(4);
  o.outbox.start();
  await outboxIdle(o.outbox, o.held);
  const id = o.add('c1');
  o.outbox.notify();
  await outboxIdle(o.outbox, o.held);
  assert.deepEqual(o.sent, [id], 'sent with the clock never moved');
  await o.outbox.stop();
});

test('at most `concurrency` requests are in flight at once', async () => {
  const o = setup(2);
  const answers: Array<() => void> = [];
  const seen: string[] = [];
  const store = o.store;
  const outbox = createOutbox({
    store,
    writer: heldWriter(store).writer,
    send: (d) => {
      seen.push(d.idempotencyKey);
      return new Promise((resolve) => answers.push(() => resolve({ kind: 'response', status: 200, retryAfter: null })));
    },
    clock: o.clock,
    lookupClient: () => ({ id: 'a', enabled: true, settings: DEFAULT_CLIENT_SETTINGS, keys: [createSecretKey(Buffer.from('s'.repeat(32)))] }),
    concurrency: 2,
    pollMs: 1000,
    log: () => {},
  });
  for (const c of ['c1', 'c2', 'c3', 'c4']) o.add(c);
  outbox.start();
  await outboxIdle(outbox, () => answers.length);
  assert.equal(seen.length, 2);
  answers.shift()!();
  await outboxIdle(outbox, () => answers.length);
  assert.equal(seen.length, 3, 'an answered request makes room for one more');
  for (const answer of answers.splice(0)) answer();
  await outboxIdle(outbox, () => answers.length);
  for (const answer of answers.splice(0)) answer();
  await outboxIdle(outbox, () => answers.length);
  assert.equal(seen.length, 4);
  assert.equal(new Set(seen).size, 4, 'none sent twice');
  await outbox.stop();
});

test('a reply that can never be delivered puts its conversation in Needs you, with one alert however many die', async () => {
  const store = createStore(openDatabase(':memory:'));
  store.clients.create('a', DEFAULT_CLIENT_SETTINGS, 0);
  const clock = manualClock();
  clock.advance(1_000);
  const client = { id: 'a', enabled: true, settings: DEFAULT_CLIENT_SETTINGS, keys: [createSecretKey(Buffer.from('s'.repeat(32)))] };
  const alerts: string[] = [];
  const send = (): Promise<SendResult> => Promise.resolve({ kind: 'response', status: 410, retryAfter: null });
  const outbox = createOutbox({ store, writer: heldWriter(store).writer, send, clock, lookupClient: () => client, concurrency: 4, pollMs: 1000, log: () => {}, onAlert: (id, reason) => alerts.push(`${id} ${reason}`) });
  store.conversations.create({ id: 'frank', clientId: 'a', channel: 'im', peer: 'u:frank', groupId: null, customerId: 'frank', autoReply: 'active', now: 0 });
  for (const n of [1, 2]) {
    const msgId = `reply-${n}`;
    const info = { msg_id: msgId, reply_to: ['m'], conversation_id: 'frank', to_user_id: 'frank', content: 'hi', message_type: 1, event_type: 'auto_dialog', from_user_type: 4, create_timestamp: 0 };
    const replyId = store.messages.insertReply({ conversationId: 'frank', kind: 'auto', msgId, replyTo: ['m'], afterMessageId: 0, content: 'hi', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: 0 });
    store.deliveries.insert({ replyId, replyMsgId: msgId, conversationId: 'frank', clientId: 'a', sendUrl: 'http://receiver.test/hook', messageInfo: JSON.stringify(info), state: 'pending', nextAttemptAt: 0, createdAt: 0 });
  }
  outbox.start();
  await outboxIdle(outbox);
  assert.equal(store.deliveries.countByState().dead, 2, '410 is final');
  const conv = store.conversations.byId('frank')!;
  assert.deepEqual([conv.needsHuman, conv.needsHumanSince, conv.needsHumanReason], [true, clock.now(), 'delivery_failed']);
  assert.deepEqual(alerts, ['frank delivery_failed']);
  await outbox.stop();
});
