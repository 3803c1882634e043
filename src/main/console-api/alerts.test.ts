import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alertText } from './alerts.ts';
import type { ConversationRow } from '../store/conversations.ts';

const row = (over: Partial<ConversationRow>): ConversationRow => ({
  id: 'c1',
  clientId: 'acme',
  channel: 'im',
  peer: 'u:wxid_8g2k',
  groupId: null,
  customerId: 'wxid_8g2k',
  autoReply: 'active',
  pausedUntil: null,
  needsHuman: true,
  messageCount: 1,
  createdAt: 0,
  lastMessageAt: 0,
  customerName: null,
  groupName: null,
  unread: 1,
  needsHumanSince: 0,
  needsHumanReason: 'handoff',
  resolvedAt: null,
  resolvedBy: null,
  ...over,
});

test('an alert names the customer and the group as the integration did, with the id agents quote', () => {
  assert.equal(alertText(row({ customerName: 'Nora' }), { text: 'my printer jams', by: 'Nora' }, 'handoff'), 'The bot handed Nora (wxid_8g2k) over to you: “my printer jams”');
  assert.equal(alertText(row({}), null, 'needs_human'), 'wxid_8g2k needs you');
  const group = { peer: 'g:R:1069605174', groupId: 'R:1069605174', customerName: 'Nora' };
  assert.equal(alertText(row({ ...group, groupName: 'Printer support' }), null, 'needs_human'), 'Printer support (group R:1069605174) needs you');
  assert.equal(alertText(row(group), null, 'needs_human'), 'group R:1069605174 needs you', 'a group never sent a name is its id, not its last speaker');
  assert.equal(
    alertText(row({ ...group, groupName: 'Printer support' }), { text: 'how do I reset my password?', by: 'Sam' }, 'handoff'),
    'The bot handed Printer support (group R:1069605174) over to you: Sam: “how do I reset my password?”',
    'in a group, the member who asked',
  );
});

test('a long name is cut in the sentence, the id kept whole', () => {
  const text = alertText(row({ customerName: 'N'.repeat(120) }), null, 'needs_human');
  assert.match(text, /^N{39}… \(wxid_8g2k\) needs you$/);
});
