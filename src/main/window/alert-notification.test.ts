import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alertNotification } from './alert-notification.ts';
import type { ConsoleEvent } from '../../shared/console-api.ts';

const alert = { type: 'alert', conversationId: 'c_1', reason: 'handoff', text: 'The bot handed Alice (cust-1) over to you: “refund?”', said: 'refund?' } as const;

test('an alert notifies with its text while the window is not focused', () => {
  assert.deepEqual(alertNotification(alert, false), { title: 'Switchboard: the bot handed over a conversation', body: alert.text, silent: false });
  assert.equal(alertNotification({ ...alert, reason: 'needs_human' }, false)?.title, 'Switchboard: a conversation needs you');
  assert.equal(alertNotification({ ...alert, reason: 'delivery_failed' }, false)?.title, 'Switchboard: a reply could not be delivered');
  assert.equal(alertNotification({ ...alert, reason: 'customer_waiting' }, false)?.title, 'Switchboard: a customer wrote while a human has the conversation');
  assert.equal(alertNotification({ ...alert, reason: 'staff_silent' }, false)?.title, 'Switchboard: a customer is still waiting for staff in the IM');
});

test('nothing while the operator is looking at the window, and nothing for other events', () => {
  assert.equal(alertNotification(alert, true), null);
  assert.equal(alertNotification({ type: 'conversation', conversationId: 'c_1' }, false), null);
  assert.equal(alertNotification({ type: 'delivery', conversationId: 'c_1', state: 'dead' }, false), null);
});

test('team mode: a conversation given to the owner, and a colleague\'s note naming them, notify too', () => {
  const assigned: ConsoleEvent = { type: 'assigned', conversationId: 'c_1', assignee: 'boss', by: { id: 'ann', name: 'Ann' }, said: 'refund?', recipients: ['boss'] };
  assert.deepEqual(alertNotification(assigned, false), { title: 'Switchboard: Ann assigned you a conversation', body: 'refund?', silent: false });
  assert.equal(alertNotification({ ...assigned, by: null } as ConsoleEvent, false)?.title, 'Switchboard: A conversation was assigned to you');
  const mention: ConsoleEvent = { type: 'mention', conversationId: 'c_1', noteId: 3, by: { id: 'ann', name: 'Ann' }, text: '@boss look', recipients: ['boss'] };
  assert.deepEqual(alertNotification(mention, false), { title: 'Switchboard: Ann mentioned you in a note', body: '@boss look', silent: false });
  assert.equal(alertNotification(mention, true), null);
});
