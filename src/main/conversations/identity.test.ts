import { test } from 'node:test';
import assert from 'node:assert/strict';
import { peerOf, senderRole, channelOf } from './identity.ts';
import type { MessageInfo } from '../../shared/protocol/message-schema.ts';

const m = (o: Partial<MessageInfo>): MessageInfo => ({ event_type: 'auto_dialog', ...o });

test('channel: web for website_dialog, im for the rest', () => {
  assert.equal(channelOf('website_dialog'), 'web');
  for (const et of ['auto_dialog', 'assist_dialog', 'cmd_dialog'] as const) assert.equal(channelOf(et), 'im');
});

test('roles: type 4 AI, type 3 staff, the bound account staff, others customers', () => {
  assert.equal(senderRole(m({ from_user_type: 4 }), 'bot'), 'ai');
  assert.equal(senderRole(m({ from_user_type: 3 }), 'bot'), 'staff');
  assert.equal(senderRole(m({ from_user_type: 1, from_user_id: 'bot' }), 'bot'), 'staff');
  assert.equal(senderRole(m({ from_user_id: 'bot' }), 'bot'), 'staff');
  assert.equal(senderRole(m({ from_user_type: 1, from_user_id: 'x' }), 'bot'), 'customer');
  assert.equal(senderRole(m({ from_user_type: 2, from_user_id: 'bot' }), undefined), 'customer');
  // Section 6: "type 1 from the bound account itself" is staff; type 2 is a customer, whoever it is.
  assert.equal(senderRole(m({ from_user_type: 2, from_user_id: 'bot' }), 'bot'), 'customer');
});

test('peer: the group when there is one, else the customer seen from either side', () => {
  assert.equal(peerOf(m({ group_id: 'g1', from_user_id: 'u1' }), undefined).peer, 'g:g1');
  assert.equal(peerOf(m({ group_id: '', from_user_id: 'u1' }), undefined).peer, 'u:u1');
  assert.equal(peerOf(m({ from_user_id: 'u1', to_user_id: 'bot' }), 'bot').peer, 'u:u1');
  assert.equal(peerOf(m({ from_user_id: 'agent', from_user_type: 3, to_user_id: 'u1' }), 'bot').peer, 'u:u1');
  assert.equal(peerOf(m({ from_user_id: 'bot', to_user_id: 'u1' }), 'bot').peer, 'u:u1');
  // Section 4 names the bound account whatever its type.
  assert.equal(peerOf(m({ from_user_id: 'bot', from_user_type: 2, to_user_id: 'u1' }), 'bot').peer, 'u:u1');
  assert.equal(peerOf(m({ from_user_id: 'agent', from_user_type: 3 }), 'bot').peer, 'u:agent', 'staff without to_user_id');
});
