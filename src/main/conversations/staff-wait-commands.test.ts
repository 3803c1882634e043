import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../store/db.ts';
import { createStore } from '../store/index.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';
import { manualClock } from '../../shared/clock.ts';
import { newId } from '../store/ids.ts';
import { checkStaffWait, staffWaitNotBefore, STAFF_WAIT_HISTORY_MS } from './staff-wait-commands.ts';
import { stopConversation } from './state-commands.ts';
import { staffWatchSince } from './staff-wait.ts';
import type { ReplyReason } from '../../shared/conversation.ts';

const MIN = 60_000;

function held() {
  const store = createStore(openDatabase(join(mkdtempSync(join(tmpdir(), 'sb-staff-wait-')), 's.db')));
  const clock = manualClock();
  store.clients.create('a', DEFAULT_CLIENT_SETTINGS, clock.now());
  store.conversations.create({ id: 'c', clientId: 'a', channel: 'im', peer: 'u:cust', groupId: null, customerId: 'cust', autoReply: 'stopped', now: clock.now() });
  const line = (role: 'customer' | 'staff' | 'ai', reason: ReplyReason | null = null): number => {
    if (role === 'customer') store.conversations.touchCustomer('c', clock.now());
    else store.conversations.touch('c', 1, clock.now());
    return store.messages.insert({
      conversationId: 'c', clientId: 'a', eventType: 'auto_dialog', msgId: newId('message'), role, fromUserId: role === 'customer' ? 'cust' : 'agent',
      fromUserType: role === 'customer' ? 2 : role === 'staff' ? 3 : 4, content: `${role} line`, messageInfo: '{}', createTimestamp: null,
      receivedAt: clock.now(), replyScheduled: reason ? reason === 'scheduled' : null, replyReason: reason,
    });
  };
  const reply = (kind: 'auto' | 'suggestion', afterMessageId: number) =>
    store.messages.insertReply({ conversationId: 'c', kind, msgId: newId('reply'), replyTo: [], afterMessageId, content: 'a reply', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: clock.now() });
  const check = (watchingSince = 0) => store.transactionAsync(() => checkStaffWait(store, { kind: 'staff_wait', conversationId: 'c', waitMs: 10 * MIN, now: clock.now(), watchingSince }));
  return { store, clock, line, reply, check };
}

test('not due yet: the time it will be; due: flagged once, as waiting since the unanswered line', async () => {
  const { store, clock, line, check } = held();
  const at = clock.now();
  line('customer', 'auto_reply_stopped');
  clock.advance(3 * MIN);
  assert.deepEqual(await check(), { kind: 'staff_wait', alert: false, nextAt: at + 10 * MIN });
  clock.advance(7 * MIN);
  assert.deepEqual(await check(), { kind: 'staff_wait', alert: true, nextAt: null });
  const conv = store.conversations.byId('c')!;
  assert.deepEqual([conv.needsHuman, conv.needsHumanReason, conv.needsHumanSince], [true, 'customer_waiting', at]);
  assert.deepEqual(await check(), { kind: 'staff_wait', alert: false, nextAt: null }, 'already in Needs you');
});

test('an AI line in the IM and a bot reply answer the customer; a suggestion does not', async () => {
  const { clock, line, reply, check } = held();
  line('customer', 'auto_reply_stopped');
  line('ai');
  clock.advance(20 * MIN);
  assert.equal((await check()).alert, false, 'answered by an AI line in the IM');
  const second = line('customer', 'auto_reply_stopped');
  reply('suggestion', second);
  clock.advance(5 * MIN);
  assert.equal((await check()).nextAt, clock.now() + 5 * MIN, 'a suggestion is not an answer');
  reply('auto', second);
  assert.deepEqual(await check(), { kind: 'staff_wait', alert: false, nextAt: null }, 'a reply is');
});

test('lines the bot was not held off for (answered, or not its to answer) do not wait on staff', async () => {
  const { clock, line, check } = held();
  line('customer', 'scheduled');
  line('customer', 'not_mentioned');
  clock.advance(60 * MIN);
  assert.deepEqual(await check(), { kind: 'staff_wait', alert: false, nextAt: null });
});

test('a line older than the wait and a day is history; so is one from before the watch first ran', async () => {
  const { store, clock, line, check } = held();
  const since = (now: number) => staffWaitNotBefore(now, 10 * MIN, 0);
  line('customer', 'auto_reply_stopped');
  clock.advance(10 * MIN + STAFF_WAIT_HISTORY_MS + MIN);
  assert.deepEqual(await check(), { kind: 'staff_wait', alert: false, nextAt: null });
  assert.deepEqual(store.staffWait.waiting(since(clock.now())), []);
  const at = clock.now();
  line('customer', 'auto_reply_stopped');
  assert.deepEqual(store.staffWait.waiting(since(clock.now())).map((w) => [w.conversationId, w.receivedAt]), [['c', at]]);
  clock.advance(10 * MIN);
  assert.deepEqual(await check(at + 1), { kind: 'staff_wait', alert: false, nextAt: null }, 'the watch first ran after that line');
  assert.equal((await check()).alert, true);
  assert.equal(store.conversations.byId('c')!.needsHumanSince, at);
});

test('a line whose reply staff cancelled by stopping the bot from the IM waits on them; one the console stopped does not', async () => {
  const { store, clock, line, check } = held();
  store.conversations.setAutoReply('c', 'active', null);
  const at = clock.now();
  line('customer', 'scheduled');
  clock.advance(1000);
  await store.transactionAsync(() => stopConversation(store, 'c', clock.now(), 'stop_auto_reply'));
  clock.advance(10 * MIN);
  assert.equal((await check()).alert, true);
  assert.equal(store.conversations.byId('c')!.needsHumanSince, at);
  store.conversations.clearNeedsHuman('c');
  store.conversations.setAutoReply('c', 'active', null);
  line('staff');
  line('customer', 'scheduled');
  await store.transactionAsync(() => stopConversation(store, 'c', clock.now(), 'the console'));
  clock.advance(30 * MIN);
  assert.deepEqual(await check(), { kind: 'staff_wait', alert: false, nextAt: null }, 'the console stopped it: an operator is on it');
});

test('a reply whose delivery was cancelled never reached the customer: not an answer', async () => {
  const { store, clock, line, reply, check } = held();
  const waiting = line('customer', 'auto_reply_stopped');
  const replyId = reply('auto', waiting);
  const deliveryId = store.deliveries.insert({ replyId, replyMsgId: 'r', conversationId: 'c', clientId: 'a', sendUrl: 'http://127.0.0.1:9/x', messageInfo: '{}', state: 'pending', nextAttemptAt: clock.now(), createdAt: clock.now() });
  clock.advance(10 * MIN);
  assert.equal((await check()).alert, false, 'a reply on its way answers');
  store.deliveries.cancel(deliveryId, 'auto-reply stopped by stop_auto_reply', clock.now());
  assert.equal((await check()).alert, true, 'cancelled, it does not');
});

test('a conversation the console resumed is the bot\'s again: no wait', async () => {
  const { store, clock, line, check } = held();
  line('customer', 'auto_reply_stopped');
  store.conversations.setAutoReply('c', 'active', null);
  clock.advance(30 * MIN);
  assert.deepEqual(await check(), { kind: 'staff_wait', alert: false, nextAt: null });
});

test('a reply made but not yet delivered when staff stop the bot from the IM never reached the customer: the line waits on them', async () => {
  const { store, clock, line, reply, check } = held();
  store.conversations.setAutoReply('c', 'active', null);
  const at = clock.now();
  const waiting = line('customer', 'scheduled');
  const replyId = reply('auto', waiting);
  store.messages.settleReply(waiting, 'answered', 'r', null);
  store.deliveries.insert({ replyId, replyMsgId: 'r', conversationId: 'c', clientId: 'a', sendUrl: 'http://127.0.0.1:9/x', messageInfo: '{}', state: 'pending', nextAttemptAt: clock.now(), createdAt: clock.now() });
  clock.advance(1000);
  const stopped = await store.transactionAsync(() => stopConversation(store, 'c', clock.now(), 'stop_auto_reply'));
  assert.deepEqual([stopped.deliveries, stopped.messageIds], [1, []], 'the delivery cancelled, no reply left to make');
  clock.advance(10 * MIN);
  assert.equal((await check()).alert, true);
  assert.equal(store.conversations.byId('c')!.needsHumanSince, at);
});

test('a Resume from the console ends the wait for the lines before it, also when the IM stops the bot again later', async () => {
  const { store, clock, line, check } = held();
  line('customer', 'auto_reply_stopped');
  store.conversations.setAutoReply('c', 'active', null);
  store.messages.insert({
    conversationId: 'c', clientId: 'a', eventType: 'cmd_dialog', msgId: newId('message'), role: 'command', fromUserId: null, fromUserType: null,
    content: 'resume_auto_reply', messageInfo: '{"source":"console"}', createTimestamp: null, receivedAt: clock.now(), replyScheduled: null, replyReason: null,
  });
  clock.advance(60 * MIN);
  store.conversations.setAutoReply('c', 'stopped', null);
  assert.deepEqual(await check(), { kind: 'staff_wait', alert: false, nextAt: null });
  const at = clock.now();
  line('customer', 'auto_reply_stopped');
  clock.advance(10 * MIN);
  assert.equal((await check()).alert, true);
  assert.equal(store.conversations.byId('c')!.needsHumanSince, at, 'waiting since the line after the Resume');
});

test('the watch remembers when it first ran; switched off, it forgets, so switching it on later raises nothing older', async () => {
  const kv = new Map<string, string>();
  const settings = { get: (k: string) => kv.get(k), put: (k: string, v: string) => void kv.set(k, v), delete: (k: string) => void kv.delete(k) };
  assert.equal(await staffWatchSince(settings, 1000, true), 1000);
  assert.equal(await staffWatchSince(settings, 2000, true), 1000, 'kept across starts');
  await staffWatchSince(settings, 3000, false);
  assert.equal(await staffWatchSince(settings, 4000, true), 4000, 'on again: from then');
});
