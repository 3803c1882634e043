import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSecretKey } from 'node:crypto';
import { openDatabase } from '../store/db.ts';
import { createStore } from '../store/index.ts';
import { executeWrite } from '../conversations/write-commands.ts';
import type { MessageWriter } from '../conversations/message-service.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';
import { manualClock } from '../../shared/clock.ts';
import { createTurnSlicer } from '../loop/turn-slicer.ts';
import { createOutbox } from './outbox.ts';
import type { Delivery } from './sender.ts';
import type { SendResult } from './retry-policy.ts';
import { emptyWriteStats } from '../store/write-queue.ts';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** An in-memory store with client `a`, a writer that commits in a microtask, and the clock. */
function setup() {
  const store = createStore(openDatabase(':memory:'));
  store.clients.create('a', DEFAULT_CLIENT_SETTINGS, 0);
  const clock = manualClock();
  const client = { id: 'a', enabled: true, settings: DEFAULT_CLIENT_SETTINGS, keys: [createSecretKey(Buffer.from('s'.repeat(32)))] };
  const writer = {
    submit: (command) => new Promise((resolve) => queueMicrotask(() => resolve(executeWrite(store, command)))),
    send() {},
    drain: () => Promise.resolve(),
    close: () => Promise.resolve(),
    stats: emptyWriteStats(),
  } satisfies MessageWriter;
  return { store, clock, client, writer };
}

test('a committed batch of deliveries is started a few per turn, oldest first, and every one is sent once', async () => {
  const { store, clock, client, writer } = setup();
  const sent: Array<[string, number]> = [];
  let turn = 0;
  // Held open until the test lets go, so every delivery keeps its slot and the count is per start.
  const answers: Array<() => void> = [];
  const send = (d: Delivery): Promise<SendResult> => {
    sent.push([d.idempotencyKey, turn]);
    return new Promise((resolve) => answers.push(() => resolve({ kind: 'response', status: 200, retryAfter: null })));
  };
  let t = 0;
  const slicer = createTurnSlicer({ budgetMs: 2, now: () => t++ });
  const outbox = createOutbox({ store, writer, send, clock, lookupClient: () => client, concurrency: 50, pollMs: 1000, slicer, log: () => {} });
  const keys: string[] = [];
  for (let i = 0; i < 12; i++) {
    const conversationId = `c${i}`;
    store.conversations.create({ id: conversationId, clientId: 'a', channel: 'im', peer: `u:${conversationId}`, groupId: null, customerId: conversationId, autoReply: 'active', now: 0 });
    const msgId = `reply-${i}`;
    const info = { msg_id: msgId, reply_to: ['m'], conversation_id: conversationId, to_user_id: conversationId, content: 'hi', message_type: 1, event_type: 'auto_dialog', from_user_type: 4, create_timestamp: 0 };
    const replyId = store.messages.insertReply({ conversationId, kind: 'auto', msgId, replyTo: ['m'], afterMessageId: 0, content: 'hi', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: clock.now() });
    store.deliveries.insert({ replyId, replyMsgId: msgId, conversationId, clientId: 'a', sendUrl: 'http://receiver.test/hook', messageInfo: JSON.stringify(info), state: 'pending', nextAttemptAt: clock.now(), createdAt: clock.now() });
    keys.push(msgId);
  }
  outbox.start();
  assert.equal(outbox.inFlight(), 12, 'the whole batch is taken at once (never taken twice)');
  assert.equal(sent.length, 0, 'but nothing is started in the scanning turn');
  while (sent.length < 12 && turn < 100) {
    await nextTurn();
    turn++;
  }
  assert.deepEqual(sent.map(([k]) => k), keys, 'every delivery, oldest first');
  const turns = new Set(sent.map(([, u]) => u));
  assert.ok(turns.size >= 4, `started over several turns (${turns.size}), not all in one`);
  for (const a of answers.splice(0)) a();
  while (outbox.inFlight() > 0) await nextTurn();
  assert.equal(sent.length, 12, 'each sent once');
  assert.equal(store.deliveries.due(clock.now() + 10_000, 100).length, 0, 'all recorded as sent');
  await outbox.stop();
});

test('a taken delivery starts ahead of the quiet periods already queued on the shared slicer', async () => {
  const { store, clock, client, writer } = setup();
  let t = 0;
  const slicer = createTurnSlicer({ budgetMs: 2, now: () => t++ });
  // A backlog of reply timers that fired together, a few per turn: 40 tasks, 20 turns or more.
  const fired: number[] = [];
  for (let i = 0; i < 40; i++) slicer.run(() => fired.push(i));
  const sentAfter: number[] = [];
  const send = (): Promise<SendResult> => {
    sentAfter.push(fired.length);
    return Promise.resolve({ kind: 'response', status: 200, retryAfter: null });
  };
  const outbox = createOutbox({ store, writer, send, clock, lookupClient: () => client, concurrency: 4, pollMs: 1000, slicer, log: () => {} });
  store.conversations.create({ id: 'c', clientId: 'a', channel: 'im', peer: 'u:c', groupId: null, customerId: 'c', autoReply: 'active', now: 0 });
  const info = { msg_id: 'reply-c', reply_to: ['m'], conversation_id: 'c', to_user_id: 'c', content: 'hi', message_type: 1, event_type: 'auto_dialog', from_user_type: 4, create_timestamp: 0 };
  const replyId = store.messages.insertReply({ conversationId: 'c', kind: 'auto', msgId: 'reply-c', replyTo: ['m'], afterMessageId: 0, content: 'hi', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: 0 });
  store.deliveries.insert({ replyId, replyMsgId: 'reply-c', conversationId: 'c', clientId: 'a', sendUrl: 'http://receiver.test/hook', messageInfo: JSON.stringify(info), state: 'pending', nextAttemptAt: 0, createdAt: 0 });
  outbox.start();
  while (sentAfter.length === 0 && slicer.pending() > 0) await nextTurn();
  assert.deepEqual(sentAfter, [0], 'sent in the first slice, before any of the 40 queued tasks');
  while (slicer.pending() > 0 || outbox.inFlight() > 0) await nextTurn();
  assert.equal(fired.length, 40, 'the queued tasks all ran after it');
  await outbox.stop();
});
