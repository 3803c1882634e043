import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from './db.ts';
import { createStore } from './index.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';
import { consoleResume, consoleStop } from '../conversations/state-commands.ts';
import { executeWorkspaceCommand } from '../conversations/workspace-commands.ts';

const ann = { id: 'ann', name: 'Ann Lee' };

/** A customer message answered by an auto reply whose delivery waits (or retries) at a receiver. */
function answered() {
  const store = createStore(openDatabase(':memory:'));
  store.clients.create('a', DEFAULT_CLIENT_SETTINGS, 0);
  store.conversations.create({ id: 'c', clientId: 'a', channel: 'im', peer: 'u:alice', groupId: null, customerId: 'alice', autoReply: 'active', now: 0 });
  const messageId = store.messages.insert({
    conversationId: 'c', clientId: 'a', eventType: 'auto_dialog', msgId: 'm1', role: 'customer', fromUserId: 'alice', fromUserType: 2,
    content: 'Where is my parcel?', messageInfo: '{}', createTimestamp: null, receivedAt: 1, replyScheduled: true, replyReason: 'scheduled',
  });
  const replyId = store.messages.insertReply({ conversationId: 'c', kind: 'auto', msgId: 'r1', replyTo: ['m1'], afterMessageId: messageId, content: 'Track it.', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: 2 });
  const deliveryId = store.deliveries.insert({ replyId, replyMsgId: 'r1', conversationId: 'c', clientId: 'a', sendUrl: 'http://127.0.0.1:9/', messageInfo: '{}', state: 'pending', nextAttemptAt: 2, createdAt: 2 });
  store.messages.settleReply(messageId, 'answered', 'r1', null);
  const decision = () => store.console.transcript('c', 100).find((e) => e.msgId === 'm1')!.decision!;
  return { store, messageId, deliveryId, decision };
}

test('a customer message\'s why-line knows what became of its reply\'s delivery, as the trace does', async () => {
  const { store, messageId, deliveryId, decision } = answered();
  // A pending one also says when it goes next, and what it waits behind (nothing: it is the first).
  assert.deepEqual(decision().delivery, { id: deliveryId, state: 'pending', attempts: 0, lastError: null, nextAttemptAt: 2, behind: null });
  store.deliveries.recordAttempt({ deliveryId, attempt: 1, startedAt: 3, durationMs: 1, status: 503, error: 'HTTP 503', outcome: 'retry', state: 'pending', nextAttemptAt: 10, now: 3 });
  assert.deepEqual(decision().delivery, { id: deliveryId, state: 'pending', attempts: 1, lastError: 'HTTP 503', nextAttemptAt: 10, behind: null });
  // A stop cancels the reply made but not delivered: "answered" alone would say the customer has it.
  await consoleStop(store, 'c', ann, 4);
  assert.equal(decision().outcome, 'answered');
  assert.deepEqual(decision().delivery, { id: deliveryId, state: 'cancelled', attempts: 1, lastError: 'auto-reply stopped by the console' });
  assert.equal(store.trace.forMessage(messageId)!.delivery!.state, decision().delivery!.state);
});

test('a message with no reply has no delivery on its why-line', async () => {
  const { store } = answered();
  store.messages.insert({
    conversationId: 'c', clientId: 'a', eventType: 'auto_dialog', msgId: 'm2', role: 'staff', fromUserId: 'agent', fromUserType: 3,
    content: 'On it', messageInfo: '{}', createTimestamp: null, receivedAt: 5, replyScheduled: false, replyReason: 'sender_not_customer',
  });
  assert.equal(store.console.transcript('c', 100).find((e) => e.msgId === 'm2')!.decision!.delivery, null);
});

test('stop and resume from the console each leave a line naming the operator; the list previews the last as a command', async () => {
  const { store } = answered();
  await consoleStop(store, 'c', ann, 10);
  assert.deepEqual(store.console.conversation('c')!.lastCommand, { command: 'stop_auto_reply', source: 'console', operator: 'Ann Lee' });
  assert.equal(store.console.conversation('c')!.lastText, 'stop_auto_reply');
  await consoleResume(store, 'c', { id: 'bo', name: 'Bo' }, 20);
  const lines = store.console.transcript('c', 100).filter((e) => e.role === 'command');
  assert.deepEqual(lines.map((e) => [e.content, e.at, e.messageInfo?.['source'], (e.messageInfo?.['operator'] as { name: string }).name]), [
    ['stop_auto_reply', 10, 'console', 'Ann Lee'],
    ['resume_auto_reply', 20, 'console', 'Bo'],
  ]);
  assert.deepEqual(store.console.conversations({ limit: 10, now: 30 }).items[0]!.lastCommand, { command: 'resume_auto_reply', source: 'console', operator: 'Bo' });
  // Resuming what is already active changes nothing and writes nothing.
  await consoleResume(store, 'c', ann, 30);
  assert.equal(store.console.transcript('c', 100).filter((e) => e.role === 'command').length, 2);
});

test('a reply previews as what the customer was told, and by whom; a stop from the integration previews as one', async () => {
  const { store } = answered();
  const c = () => store.console.conversation('c')!;
  assert.deepEqual([c().lastText, c().lastReply, c().lastCommand], ['Track it.', { by: 'bot', operator: null }, null]);
  assert.deepEqual(store.console.conversations({ limit: 10, now: 30 }).items[0]!.lastReply, { by: 'bot', operator: null }, 'the list says the same');
  store.messages.insert({
    conversationId: 'c', clientId: 'a', eventType: 'auto_dialog', msgId: 'm2', role: 'customer', fromUserId: 'alice', fromUserType: 2,
    content: 'It did not come', messageInfo: '{}', createTimestamp: null, receivedAt: 3, replyScheduled: null, replyReason: null,
  });
  assert.deepEqual([c().lastText, c().lastReply], ['It did not come', undefined], 'a newer customer line wins');
  const last = (store.connection.prepare('SELECT max(id) AS id FROM messages').get() as { id: number }).id;
  store.messages.insertReply({ conversationId: 'c', kind: 'suggestion', msgId: 's1', replyTo: ['m2'], afterMessageId: last, content: 'Sorry!', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: 4 });
  assert.equal(c().lastText, 'It did not come', 'a suggestion was never sent: not a reply');
  store.messages.insertReply({ conversationId: 'c', kind: 'operator', msgId: 'o1', replyTo: ['m2'], afterMessageId: last, content: 'Sending a new one today.', handoff: false, engine: 'operator', confidence: null, sources: [], createdAt: 4, operator: { id: 'ann', name: 'Ann Lee' } });
  assert.deepEqual([c().lastText, c().lastReply], ['Sending a new one today.', { by: 'operator', operator: 'Ann Lee' }]);
  store.messages.insert({
    conversationId: 'c', clientId: 'a', eventType: 'cmd_dialog', msgId: 'cmd-1', role: 'command', fromUserId: 'crm', fromUserType: null,
    content: 'stop_auto_reply', messageInfo: JSON.stringify({ event_type: 'cmd_dialog', content: 'stop_auto_reply' }), createTimestamp: null, receivedAt: 5, replyScheduled: null, replyReason: null,
  });
  assert.deepEqual(store.console.conversation('c')!.lastCommand, { command: 'stop_auto_reply', source: 'integration', operator: null });
});

test('Resolve leaves a line in the transcript naming who resolved it, and the list previews it; resolving what needs no one writes nothing', async () => {
  const { store } = answered();
  const ann = { id: 'ann', name: 'Ann Lee' };
  await executeWorkspaceCommand(store, { kind: 'resolve', conversationId: 'c', operator: ann, now: 40 });
  assert.equal(store.console.transcript('c', 100).filter((e) => e.role === 'command').length, 0, 'nothing needed resolving');
  store.conversations.flagNeedsHuman('c', 30, 'handoff');
  await executeWorkspaceCommand(store, { kind: 'resolve', conversationId: 'c', operator: ann, now: 50 });
  const lines = store.console.transcript('c', 100).filter((e) => e.role === 'command');
  assert.deepEqual(lines.map((e) => [e.content, e.at, e.messageInfo?.['operator']]), [['resolve', 50, ann]]);
  assert.deepEqual(store.console.conversation('c')!.lastCommand, { command: 'resolve', source: 'console', operator: 'Ann Lee' });
});

test('Needs you shows what the customer last said, where the list shows the bot\'s reply', async () => {
  const { store } = answered();
  store.conversations.flagNeedsHuman('c', 3, 'handoff');
  const queue = () => store.console.conversations({ view: 'needs_you', limit: 10, now: 30 }).items;
  assert.deepEqual(queue().map((c) => [c.lastText, c.lastCustomerText]), [['Track it.', 'Where is my parcel?']]);
  store.messages.insert({
    conversationId: 'c', clientId: 'a', eventType: 'auto_dialog', msgId: 'm3', role: 'staff', fromUserId: 'agent', fromUserType: 3,
    content: 'Looking', messageInfo: '{}', createTimestamp: null, receivedAt: 6, replyScheduled: false, replyReason: 'sender_not_customer',
  });
  assert.equal(queue()[0]!.lastCustomerText, 'Where is my parcel?', 'a staff line is not the customer');
  assert.equal('lastCustomerText' in store.console.conversations({ limit: 10, now: 30 }).items[0]!, false, 'the list does not read it');
});
