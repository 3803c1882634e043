import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideReply, type DecisionInput } from './decide.ts';

const NOW = 1_800_000_000_000;
const base: DecisionInput = {
  role: 'customer',
  isGroup: false,
  groupPolicy: 'mention',
  mentioned: false,
  quotesOurReply: false,
  state: 'active',
  createTimestampSeconds: NOW / 1000,
  now: NOW,
  staleMinutes: 10,
  autoRepliesLastMinute: 0,
};
const reason = (o: Partial<DecisionInput>) => decideReply({ ...base, ...o }).reason;

test('a customer message in an active one-to-one conversation is scheduled', () => {
  assert.deepEqual(decideReply(base), { scheduled: true, reason: 'scheduled' });
});

test('reasons, one by one', () => {
  assert.equal(reason({ role: 'staff' }), 'sender_not_customer');
  assert.equal(reason({ role: 'ai' }), 'sender_not_customer');
  assert.equal(reason({ isGroup: true }), 'not_mentioned');
  assert.equal(reason({ isGroup: true, mentioned: true }), 'scheduled');
  assert.equal(reason({ isGroup: true, quotesOurReply: true }), 'scheduled');
  assert.equal(reason({ isGroup: true, groupPolicy: 'all' }), 'scheduled');
  assert.equal(reason({ isGroup: true, groupPolicy: 'never', mentioned: true }), 'not_mentioned');
  assert.equal(reason({ createTimestampSeconds: NOW / 1000 - 601 }), 'stale_message');
  assert.equal(reason({ createTimestampSeconds: NOW / 1000 - 600 }), 'scheduled');
  assert.equal(reason({ createTimestampSeconds: null }), 'scheduled');
  assert.equal(reason({ createTimestampSeconds: 0, staleMinutes: 0 }), 'scheduled', '0 turns the stale limit off');
  assert.equal(reason({ state: 'stopped' }), 'auto_reply_stopped');
  assert.equal(reason({ state: 'paused' }), 'auto_reply_paused');
  assert.equal(reason({ autoRepliesLastMinute: 5 }), 'scheduled');
  assert.equal(reason({ autoRepliesLastMinute: 6 }), 'rate_limited');
});

test('precedence: who sent it, then whether it was addressed, its age, the state, the rate', () => {
  const everything: Partial<DecisionInput> = { isGroup: true, createTimestampSeconds: 0, state: 'stopped', autoRepliesLastMinute: 9 };
  assert.equal(reason({ ...everything, role: 'staff' }), 'sender_not_customer');
  assert.equal(reason(everything), 'not_mentioned');
  assert.equal(reason({ ...everything, mentioned: true }), 'stale_message');
  assert.equal(reason({ ...everything, mentioned: true, createTimestampSeconds: null }), 'auto_reply_stopped');
  assert.equal(reason({ ...everything, mentioned: true, createTimestampSeconds: null, state: 'active' }), 'rate_limited');
});
