import assert from 'node:assert/strict';
import type { Awaitable, StoreContract } from '../contract.ts';
import type { NewMessage } from '../messages.ts';
import { cancelledBeforeReplyNote, cancelledDeliveryReason } from '../staff-wait.ts';
import type { ReplyReason } from '../../../shared/conversation.ts';

/**
 * One scenario for the conversation groups of both stores (conversation-groups.test.ts): every
 * function of conversations, messages, workspace, staffWait, idempotency and searchIndex, with
 * the edges (unknown ids, null columns, non-JSON message_info, Chinese text), its results
 * gathered so the test can compare the stores' whole answers, and asserted here as well so that
 * two stores wrong in the same way still fail.
 */

export const CLIENT = 'shop';
export const T0 = 1_700_000_000_000;

/** The groups under test, and the few writes of other groups the scenario needs to set up. */
export type Groups = Pick<StoreContract, 'conversations' | 'messages' | 'workspace' | 'staffWait' | 'idempotency' | 'searchIndex'> & {
  people: Pick<StoreContract['people'], 'remember'>;
  deliveries: Pick<StoreContract['deliveries'], 'insert' | 'cancelForConversation'>;
  kbAdd(question: string, now: number): Awaitable<number>;
};

export interface Target {
  /** The groups outside any transaction (each statement its own). */
  s: Groups;
  /** `work` in one transaction, committed as the store commits (SQLite: its search queue flushed). */
  tx<T>(work: (s: Groups) => Promise<T>): Promise<T>;
}

const message = (conversationId: string, msgId: string, at: number, o: Partial<NewMessage> = {}): NewMessage => ({
  conversationId,
  clientId: CLIENT,
  eventType: 'auto_dialog',
  msgId,
  role: 'customer',
  fromUserId: 'u1',
  fromUserType: 1,
  content: `line ${msgId}`,
  messageInfo: JSON.stringify({ send_url: 'http://127.0.0.1:9/hook', nickname: 'Nora' }),
  createTimestamp: at - 1,
  receivedAt: at,
  replyScheduled: true,
  replyReason: 'scheduled',
  ...o,
});

const held = (reason: ReplyReason): Partial<NewMessage> => ({ replyScheduled: false, replyReason: reason });

async function conversationsPart(s: Groups, out: Record<string, unknown>): Promise<void> {
  const c = s.conversations;
  const base = { clientId: CLIENT, channel: 'im' as const, groupId: null, customerId: 'u1', autoReply: 'active' as const };
  out['created'] = await c.create({ ...base, id: 'c1', peer: 'u1', now: T0 });
  await c.create({ ...base, id: 'c2', peer: 'g1', groupId: 'g1', customerId: null, now: T0 + 1 });
  await c.create({ ...base, id: 'c3', peer: 'u3', now: T0 + 2 });
  await c.create({ ...base, id: 'c4', peer: 'u4', autoReply: 'stopped', now: T0 + 3 });
  out['byKey'] = await c.byKey(CLIENT, 'im', 'g1');
  assert.equal(await c.byKey(CLIENT, 'web', 'g1'), undefined);
  assert.equal(await c.byId('nope'), undefined);
  await c.setAutoReply('c3', 'paused', T0 + 60_000);
  const flags = [
    await c.flagNeedsHuman('c1', T0 + 10, 'customer_waiting'),
    await c.flagNeedsHuman('c1', T0 + 11, 'handoff'),
    await c.clearWaitingSince('c1', T0 + 20),
    await c.clearWaitingSince('c1', T0 + 10),
    await c.clearNeedsHuman('c1'),
    await c.flagNeedsHuman('c1', T0 + 12, 'no_answer'),
    await c.clearWaitingSince('c1', 0),
    await c.clearNeedsHuman('c1'),
    await c.clearNeedsHuman('c1'),
    await c.resolve('c2', T0 + 30, 'ann'),
    await c.resolve('nope', T0 + 30, 'ann'),
    await c.unresolve('c2', T0 + 5, T0 + 1, 'bob'),
    await c.unresolve('c2', T0 + 6, null, null),
  ];
  assert.deepEqual(flags, [true, false, false, true, false, true, false, true, false, true, false, true, false]);
  await c.touch('c1', 2, T0 + 40);
  await c.touch('c1', 1, T0 + 35);
  await c.touchCustomer('c2', T0 + 50, '张三', '群 "A" 100%');
  await c.touchCustomer('c2', T0 + 45);
  await c.rename('c3', null, 'Group_\\x');
  await c.rename('c3', 'Ann', null);
  out['c1'] = await c.byId('c1');
  out['c2'] = await c.byId('c2');
  out['c3'] = await c.byId('c3');
  assert.deepEqual(out['c1'] && [(out['c1'] as { messageCount: number }).messageCount, (out['c1'] as { lastMessageAt: number }).lastMessageAt], [3, T0 + 40]);
  assert.equal((out['c2'] as { needsHumanSince: number }).needsHumanSince, T0 + 5);
  out['labels'] = await c.labels(['c2', 'c3', 'c2', 'nope']);
  assert.deepEqual((out['labels'] as Record<string, unknown>)['c2'], { peer: 'g1', groupId: 'g1', groupName: '群 "A" 100%', customerId: null, customerName: '张三' });
  assert.deepEqual(await c.labels([]), {});
}

async function messagesPart(s: Groups, out: Record<string, unknown>): Promise<Record<string, number>> {
  const m = s.messages;
  const id: Record<string, number> = {};
  id['a'] = await m.insert(message('c1', 'a', T0 + 100));
  id['b'] = await m.insert(message('c1', 'b', T0 + 110, { messageInfo: JSON.stringify({ send_url: 'http://127.0.0.1:9/b', 说明: '中文' }) }));
  id['staff'] = await m.insert(message('c1', 'staff', T0 + 120, { role: 'staff', fromUserId: 'agent', replyScheduled: null, replyReason: 'sender_not_customer' }));
  const stopInfo = JSON.stringify({ source: 'console', operator: { id: 'a1', name: 'Ann' } });
  id['stop'] = await m.insert(message('c1', 'stop', T0 + 130, { role: 'command', eventType: 'cmd_dialog', content: 'stop_auto_reply', messageInfo: stopInfo, replyScheduled: null, replyReason: null }));
  id['held1'] = await m.insert(message('c1', 'held1', T0 + 140, held('auto_reply_stopped')));
  id['held2'] = await m.insert(message('c1', 'held2', T0 + 150, { ...held('auto_reply_stopped'), messageInfo: 'not json {', content: null }));
  id['p1'] = await m.insert(message('c2', 'p1', T0 + 160, { fromUserId: 'u9' }));
  id['p2'] = await m.insert(message('c2', 'p2', T0 + 170, { ...held('not_mentioned'), fromUserId: 'u8' }));
  id['p3'] = await m.insert(message('c2', 'p3', T0 + 180, { fromUserId: 'u9', content: '退款 50%_off' }));
  await s.people.remember(CLIENT, 'u9', '李四', T0);
  const reply = (conversationId: string, kind: 'auto' | 'operator' | 'suggestion' | 'website', msgId: string, after: number, at: number) =>
    m.insertReply({
      conversationId, kind, msgId, replyTo: [msgId], afterMessageId: after, content: `reply ${msgId}`, handoff: false, engine: kind === 'operator' ? 'operator' : 'kb',
      confidence: kind === 'operator' ? null : 0.5, sources: [{ id: 1 }], operator: kind === 'operator' ? { id: 'a1', name: 'Ann' } : null, createdAt: at,
    });
  id['r1'] = await reply('c1', 'auto', 'r1', id['a'], T0 + 105);
  id['r2'] = await reply('c1', 'auto', 'r2', id['b'], T0 + 115);
  id['sug'] = await reply('c2', 'suggestion', 'sug', id['p1'], T0 + 165);
  id['op'] = await reply('c2', 'operator', 'op', id['p1'], T0 + 166);
  assert.deepEqual(Object.values(id), [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4]);

  out['found'] = [await m.findAutoMessage(CLIENT, 'p1'), await m.findAutoMessage(CLIENT, 'stop'), await m.findAutoMessage('other', 'p1')];
  out['context'] = await m.context('c1', id['held2'], 10);
  out['context2'] = await m.context('c2', 100, 2);
  out['info'] = [await m.messageInfo(id['b']), await m.messageInfo(999)];
  await assert.rejects(async () => m.messageInfo(id['held2']!), SyntaxError, 'message_info that is not JSON fails to parse, on both');
  out['stored'] = [await m.storedInfo(id['b']), await m.storedInfo(id['held2']), await m.storedInfo(999)];
  assert.equal((out['stored'] as Array<{ bytes: number }>)[0]!.bytes, Buffer.byteLength(JSON.stringify({ send_url: 'http://127.0.0.1:9/b', 说明: '中文' })));
  out['pendingAll'] = await m.pendingReplies();
  out['pendingC2'] = await m.pendingReplies('c2');
  assert.deepEqual((out['pendingAll'] as Array<{ msgId: string }>).map((p) => p.msgId), ['a', 'b', 'p1', 'p3']);
  const note = cancelledBeforeReplyNote('Ann');
  out['settle'] = [await m.settleReply(id['a'], 'answered', 'r1', null), await m.settleReply(id['a'], 'stale', null, 'late'), await m.settleReply(999, 'stale', null, null)];
  assert.deepEqual(out['settle'], [true, false, false]);
  out['cancelled'] = await m.cancelPendingReplies('c2', note);
  assert.deepEqual(out['cancelled'], [id['p1'], id['p3']]);
  assert.deepEqual(await m.cancelPendingReplies('nope', note), []);
  out['restored'] = [
    await m.restoreCancelledReplies('c2', [id['p3']!, id['p1']!, id['a']!], 'another note'),
    await m.restoreCancelledReplies('c2', [id['p3']!, id['p1']!, id['a']!], note),
    await m.restoreCancelledReplies('c2', [id['p3']!], note),
    await m.restoreCancelledReplies('c2', [], note),
  ];
  assert.deepEqual(out['restored'], [[], [T0 + 160, T0 + 180], [], []]);
  out['revived'] = [await m.reviveStoppedSince('c1', id['stop']!), await m.reviveStoppedSince('c1', id['stop']!)];
  assert.deepEqual(out['revived'], [[T0 + 140, T0 + 150], []]);
  out['trace'] = [await m.replyTrace(id['a']), await m.replyTrace(id['held1']), await m.replyTrace(id['staff']), await m.replyTrace(999)];
  out['ours'] = [await m.isOurReply(CLIENT, 'r1'), await m.isOurReply(CLIENT, 'op'), await m.isOurReply(CLIENT, 'sug'), await m.isOurReply('other', 'r1'), await m.isOurReply(CLIENT, 'a')];
  assert.deepEqual(out['ours'], [true, true, false, false, false]);
  out['autoCount'] = [await m.countAutoRepliesSince('c1', T0 + 105), await m.countAutoRepliesSince('c1', T0 + 106), await m.countAutoRepliesSince('nope', 0)];
  assert.deepEqual(out['autoCount'], [2, 1, 0]);
  out['autoTimes'] = [await m.autoReplyTimesSince('c1', 0), await m.autoReplyTimesSince('c2', 0)];
  assert.deepEqual(out['autoTimes'], [[T0 + 105, T0 + 115], []]);
  out['read'] = [await s.conversations.markRead('c2', id['p1']!), await s.conversations.markRead('c2', 0), await s.conversations.markRead('nope', 5)];
  assert.deepEqual(out['read'], [2, 2, undefined], 'greatest: an older mark does not unread what was read');
  return id;
}

async function workspacePart(s: Groups, id: Record<string, number>, out: Record<string, unknown>): Promise<void> {
  const w = s.workspace;
  out['latest'] = [await w.latestCustomerMessage('c1'), await w.latestCustomerMessage('c4'), await w.latestMessageId('c1'), await w.latestMessageId('nope')];
  // c1's latest auto_dialog line is not JSON; c2's carries a string; c3: none. An object is its JSON text.
  out['sendUrl'] = [await w.latestAutoSendUrl('c1'), await w.latestAutoSendUrl('c2'), await w.latestAutoSendUrl('c3')];
  assert.deepEqual(out['sendUrl'], [null, 'http://127.0.0.1:9/hook', null]);
  await s.messages.insert(message('c3', 'obj', T0 + 190, { messageInfo: JSON.stringify({ send_url: { host: 'x', n: [1, '中'] } }) }));
  // A line with no reply reason (NULL) is not 'not_mentioned': SQLite's IS NOT counts it as unanswered.
  await s.messages.insert(message('c3', 'web', T0 + 191, { eventType: 'website_dialog', messageInfo: JSON.stringify({ send_url: 'http://web' }), replyScheduled: null, replyReason: null }));
  out['sendUrlObject'] = await w.latestAutoSendUrl('c3');
  assert.equal(out['sendUrlObject'], '{"host":"x","n":[1,"中"]}');
  out['unanswered'] = [await w.unanswered('c1', 5), await w.unanswered('c1', 1), await w.unanswered('c2', 5), await w.unanswered('c3', 5), await w.unanswered('nope', 5)];
  assert.deepEqual((out['unanswered'] as Array<Array<{ msgId: string }>>).map((x) => x.map((a) => a.msgId)), [['held1', 'held2'], ['held2'], ['p3'], ['obj', 'web'], []]);
  out['customerMessage'] = [await w.customerMessage('c2', 'p2'), await w.customerMessage('c2', 'nope'), await w.customerMessage('c1', 'staff')];
  out['lastText'] = [await w.lastCustomerText('c1'), await w.lastCustomerText('c2'), await w.lastCustomerText('c3'), await w.lastCustomerText('c4')];
  assert.deepEqual(out['lastText'], [{ text: 'line held1', by: 'u1' }, { text: '退款 50%_off', by: '李四' }, { text: 'line web', by: 'u1' }, null]);
  out['spoken'] = [await w.spokenAfter('c1', id['stop']!), await w.spokenAfter('c1', id['held2']!), await w.spokenAfter('c2', id['p3']!), await w.spokenAfter('c2', id['p1']!)];
  assert.deepEqual(out['spoken'], [true, false, false, true]);
  out['sinceLine'] = [await w.sinceLine('c1', id['a']!), await w.sinceLine('c1', id['stop']!), await w.sinceLine('c2', id['p1']!), await w.sinceLine('nope', 0)];
  assert.deepEqual(out['sinceLine'], [
    { humanAt: T0 + 120, stopped: true },
    { humanAt: null, stopped: false },
    { humanAt: T0 + 166, stopped: false },
    { humanAt: null, stopped: false },
  ]);
  out['held'] = [await w.heldByConsole('c1', 'stopped'), await w.heldByConsole('c2', 'stopped'), await w.heldByConsole('c2', 'paused'), await w.heldByConsole('c1', 'paused')];
  assert.deepEqual(out['held'], [true, false, true, false]);
  const kb = [await s.kbAdd('退货 policy?', T0), await s.kbAdd('Opening hours', T0)];
  out['kb'] = [...(await w.kbQuestions([kb[1]!, kb[0]!, kb[1]!, 999]))];
  assert.deepEqual(out['kb'], [[kb[0], '退货 policy?'], [kb[1], 'Opening hours']]);
  assert.deepEqual(await w.kbQuestions([]), new Map());
}

async function staffWaitPart(s: Groups, out: Record<string, unknown>): Promise<void> {
  // c4 (stopped): a line held off, a line whose reply the IM's stop cancelled, a line whose reply's delivery it cancelled.
  const m = s.messages;
  const h = await m.insert(message('c4', 'h', T0 + 200, held('auto_reply_stopped')));
  const x = await m.insert(message('c4', 'x', T0 + 210));
  await m.cancelPendingReplies('c4', cancelledBeforeReplyNote('stop_auto_reply'));
  const y = await m.insert(message('c4', 'y', T0 + 220));
  const r = await m.insertReply({ conversationId: 'c4', kind: 'auto', msgId: 'ry', replyTo: ['y'], afterMessageId: y, content: 'ok', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: T0 + 225 });
  await s.deliveries.insert({ replyId: r, replyMsgId: 'ry', conversationId: 'c4', clientId: CLIENT, sendUrl: 'http://127.0.0.1:9/hook', messageInfo: '{}', state: 'pending', nextAttemptAt: T0 + 225, createdAt: T0 + 225 });
  out['cancelledDeliveries'] = await s.deliveries.cancelForConversation('c4', cancelledDeliveryReason('stop_auto_reply'), T0 + 226);
  out['first'] = [await s.staffWait.firstUnanswered('c4', 0), await s.staffWait.firstUnanswered('c4', T0 + 201), await s.staffWait.firstUnanswered('c4', T0 + 211), await s.staffWait.firstUnanswered('c4', T0 + 221)];
  assert.deepEqual(out['first'], [
    { messageId: h, receivedAt: T0 + 200 },
    { messageId: x, receivedAt: T0 + 210 },
    { messageId: y, receivedAt: T0 + 220 },
    undefined,
  ]);
  // c1 is held too, and a customer wrote there since: both wait, listed by when they were last written in (not by id).
  await s.conversations.setAutoReply('c1', 'stopped', null);
  const w = await m.insert(message('c1', 'w', T0 + 600, held('auto_reply_stopped')));
  await s.conversations.touchCustomer('c1', T0 + 600);
  out['waiting'] = [await s.staffWait.waiting(0), await s.staffWait.waiting(T0 + 1000)];
  assert.deepEqual(out['waiting'], [[{ conversationId: 'c4', messageId: h, receivedAt: T0 + 200 }, { conversationId: 'c1', messageId: w, receivedAt: T0 + 600 }], []]);
}

async function idempotencyPart(s: Groups, out: Record<string, unknown>): Promise<void> {
  const i = s.idempotency;
  const put = (msgId: string, at: number) =>
    i.put({ clientId: CLIENT, eventType: 'auto_dialog', msgId, contentHash: `h-${msgId}`, status: 200, body: `{"msg":"${msgId} 好"}`, conversationId: 'c1', messageId: msgId === 'k1' ? 1 : null, signature: `sig-${msgId}`, at });
  await put('k2', T0 + 20);
  await put('k1', T0 + 10);
  await put('k3', T0 + 20);
  out['idem'] = [await i.get(CLIENT, 'auto_dialog', 'k1'), await i.get(CLIENT, 'cmd_dialog', 'k1'), await i.signaturesSince(T0 + 10), await i.signaturesSince(T0 + 21)];
  out['prune'] = [await i.needsPrune(T0 + 10), await i.needsPrune(T0 + 11), await i.prune(T0 + 21, 2), await i.needsPrune(T0 + 21), await i.prune(T0 + 21, 2), await i.prune(T0 + 21, 2)];
  assert.deepEqual(out['prune'], [false, true, 2, true, 1, 0]);
}

/** Runs the scenario on one store; returns everything it read, to be compared with the other store's. */
export async function conversationGroupsScenario(t: Target): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  await t.tx(async (s) => {
    await conversationsPart(s, out);
    const id = await messagesPart(s, out);
    await workspacePart(s, id, out);
    await staffWaitPart(s, out);
  });
  await idempotencyPart(t.s, out);
  out['search'] = [await t.s.searchIndex.queued(), await t.s.searchIndex.flushQueue()];
  assert.deepEqual(out['search'], [0, 0], 'nothing waits to be indexed once a transaction committed');
  return out;
}
