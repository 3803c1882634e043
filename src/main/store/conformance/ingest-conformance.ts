import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { IngestStore } from '../contract.ts';
import type { IngestCommand, IngestRequest, Outcome } from '../../conversations/ingest-commands.ts';
import { clientSettingsSchema, type ClientSettings } from '../../../shared/client-settings.ts';
import type { MessageInfo } from '../../../shared/protocol/message-schema.ts';
import { canonicalJson } from '../../auth/canonical-json.ts';

/** One store under test, as a node sees it: commands in transactions, reads on their own. */
export interface IngestHarness {
  /** Runs a command the way that store's node does (the writer's transaction, a PostgreSQL transaction). */
  run(command: IngestCommand): Promise<Outcome | null>;
  /** The same functions outside any command, for reading back and for setting the scene. */
  store: IngestStore;
  /** Rows in a table (the suite's own check that nothing more was written). */
  count(table: 'messages' | 'conversations' | 'idempotency' | 'replies' | 'request_log' | 'people'): Promise<number>;
  /** A request log row's count, last time and open aggregate mark. */
  logged(requestId: string): Promise<{ count: number; lastAt: number | null; aggKey: string | null } | undefined>;
  close(): Promise<void>;
}

export const CLIENT = 'acme';
export const T0 = 1_800_000_000_000;

let serial = 0;

/** An accepted request as the endpoint hands it to the commands: canonical text, its hash, a signature. */
export function request(info: Partial<MessageInfo> & Pick<MessageInfo, 'event_type'>, now: number, settings: Partial<ClientSettings> = {}): IngestRequest {
  const full = { msg_id: `m-${++serial}`, from_user_type: 2, ...info } as MessageInfo;
  const canonicalInfo = canonicalJson(full);
  return {
    requestId: `req-${serial}`,
    clientId: CLIENT,
    settings: clientSettingsSchema.parse({ boundAccount: 'shop-bot', pauseMinutes: 10, ...settings }),
    info: full,
    canonicalInfo,
    contentHash: createHash('sha256').update(canonicalInfo).digest('hex'),
    signature: `sig-${serial}`,
    now,
  };
}

const ok = (o: Outcome | null): Extract<Outcome, { kind: 'ok' }> => {
  assert.equal(o?.kind, 'ok', JSON.stringify(o));
  return o as Extract<Outcome, { kind: 'ok' }>;
};
const bodyOf = (o: Outcome | null): Record<string, unknown> => JSON.parse(ok(o).body) as Record<string, unknown>;

/**
 * The protocol's ingest rules as one store must keep them, written once and run against every
 * store (ingest-sqlite.test.ts, ingest-postgres.test.ts): conversation identity, idempotency of a
 * msg_id, what the reply policy decides and writes, the request log. `open` gives a fresh, empty
 * store with the client CLIENT.
 */
export function ingestConformance(open: () => Promise<IngestHarness>): void {
  const withStore = (fn: (h: IngestHarness) => Promise<void>) => async () => {
    const h = await open();
    try {
      await fn(h);
    } finally {
      await h.close();
    }
  };

  it('a first customer message opens its conversation, is stored once, and its reply is scheduled', withStore(async (h) => {
    const r = request({ event_type: 'auto_dialog', from_user_id: 'u1', from_user_nickname: 'Ann Chen', content: '我的订单在哪里？' }, T0);
    const outcome = ok(await h.run({ kind: 'auto_dialog', request: r }));
    assert.equal(outcome.replayed, false);
    assert.equal(outcome.replyScheduled, true);
    const body = bodyOf(outcome);
    assert.deepEqual(body['reply'], { scheduled: true, reason: 'scheduled' });
    const conv = await h.store.conversations.byKey(CLIENT, 'im', 'u:u1');
    assert.ok(conv);
    assert.equal(conv.id, body['conversation_id']);
    assert.deepEqual([conv.messageCount, conv.unread, conv.customerName, conv.autoReply, conv.lastMessageAt], [1, 1, 'Ann Chen', 'active', T0]);
    assert.deepEqual([await h.count('messages'), await h.count('idempotency'), await h.count('people')], [1, 1, 1]);
  }));

  it('the same msg_id with the same content is answered with the first response and writes nothing; other content is a conflict', withStore(async (h) => {
    const r = request({ event_type: 'auto_dialog', from_user_id: 'u1', content: 'hello?' }, T0);
    const first = ok(await h.run({ kind: 'auto_dialog', request: r }));
    const again = ok(await h.run({ kind: 'auto_dialog', request: { ...r, requestId: 'req-again', now: T0 + 5_000 } }));
    assert.equal(again.replayed, true);
    assert.equal(again.body, first.body);
    const changed = { ...r, info: { ...r.info, content: 'something else' }, contentHash: 'other-hash' };
    assert.deepEqual(await h.run({ kind: 'auto_dialog', request: changed }), { kind: 'conflict', msgId: r.info.msg_id });
    assert.deepEqual([await h.count('messages'), await h.count('idempotency')], [1, 1]);
    assert.equal((await h.store.conversations.byKey(CLIENT, 'im', 'u:u1'))!.messageCount, 1);
  }));

  it('one conversation per customer and per group; a group line not addressed to the bot is stored and not answered', withStore(async (h) => {
    await h.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'u1', content: 'a' }, T0) });
    await h.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'u1', content: 'b' }, T0 + 1) });
    const group = bodyOf(await h.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'u1', group_id: 'g1', group_name: 'VIP', content: 'c' }, T0 + 2) }));
    assert.deepEqual(group['reply'], { scheduled: false, reason: 'not_mentioned' });
    assert.equal(await h.count('conversations'), 2);
    assert.equal((await h.store.conversations.byKey(CLIENT, 'im', 'u:u1'))!.messageCount, 2);
    assert.equal((await h.store.conversations.byKey(CLIENT, 'im', 'g:g1'))!.groupName, 'VIP');
  }));

  it('staff speaking pauses the bot for pauseMinutes and takes the conversation out of Needs you', withStore(async (h) => {
    const first = ok(await h.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'u1', content: 'help' }, T0) }));
    assert.equal(await h.store.conversations.flagNeedsHuman(first.conversationId, T0, 'handoff'), true);
    assert.equal(await h.store.conversations.flagNeedsHuman(first.conversationId, T0 + 1, 'handoff'), false, 'flagged once');
    const staff = bodyOf(await h.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'shop-bot', to_user_id: 'u1', from_user_type: 1, content: 'on it' }, T0 + 1_000) }));
    assert.deepEqual([staff['auto_reply'], staff['reply']], ['paused', { scheduled: false, reason: 'sender_not_customer' }]);
    const conv = (await h.store.conversations.byId(first.conversationId))!;
    assert.deepEqual([conv.autoReply, conv.pausedUntil, conv.needsHuman, conv.unread], ['paused', T0 + 1_000 + 10 * 60_000, false, 1]);
    const later = bodyOf(await h.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'u1', content: 'still there?' }, T0 + 2_000) }));
    assert.deepEqual(later['reply'], { scheduled: false, reason: 'auto_reply_paused' });
  }));

  it('stop_auto_reply stops the bot, cancels the pending reply, and says what it was before', withStore(async (h) => {
    const first = ok(await h.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'u1', content: 'help' }, T0) }));
    const stop = await h.run({ kind: 'cmd_dialog', request: request({ event_type: 'cmd_dialog', from_user_id: 'u1', content: 'stop_auto_reply' }, T0 + 500) });
    const body = bodyOf(stop);
    assert.deepEqual([body['command'], body['auto_reply'], body['previous'], body['cancelled_replies'], body['conversation_id']], ['stop_auto_reply', 'stopped', 'active', 0, first.conversationId]);
    assert.equal(ok(stop).waitsOnStaff, true, 'the customer line left unanswered now waits on staff');
    assert.equal((await h.store.conversations.byId(first.conversationId))!.autoReply, 'stopped');
    const after = bodyOf(await h.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'u1', content: 'hello?' }, T0 + 1_000) }));
    assert.deepEqual(after['reply'], { scheduled: false, reason: 'auto_reply_stopped' });
  }));

  it('a website question is stored with its answer; a handoff enters Needs you once, with an alert', withStore(async (h) => {
    const r = request({ event_type: 'website_dialog', from_user_id: 'visitor-1', content: 'Can I pay by invoice?' }, T0);
    const answer = { content: 'Someone will get back to you.', handoff: true, confidence: 0.2, sources: [], cause: 'no confident answer' };
    const outcome = ok(await h.run({ kind: 'answered', request: r, reply: { kind: 'website', msgId: r.info.msg_id!, targetMessageId: null, existingConversationId: null, contextMessages: 0, engine: 'kb', answer } }));
    assert.equal(outcome.alert, 'handoff');
    const body = bodyOf(outcome);
    assert.deepEqual((body['reply'] as Record<string, unknown>)['content'], 'Someone will get back to you.');
    const conv = (await h.store.conversations.byKey(CLIENT, 'web', 'u:visitor-1'))!;
    assert.deepEqual([conv.needsHuman, conv.needsHumanReason, conv.messageCount], [true, 'handoff', 2]);
    assert.deepEqual([await h.count('messages'), await h.count('replies')], [1, 1]);
    const again = ok(await h.run({ kind: 'answered', request: { ...r, requestId: 'req-twin' }, reply: { kind: 'website', msgId: r.info.msg_id!, targetMessageId: null, existingConversationId: null, contextMessages: 0, engine: 'kb', answer } }));
    assert.deepEqual([again.replayed, again.body, await h.count('replies')], [true, outcome.body, 1], 'a twin that raced the engine gets the first answer');
  }));

  it('six auto replies in a minute: the seventh message is rate limited', withStore(async (h) => {
    const first = ok(await h.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'u1', content: 'q' }, T0) }));
    for (let i = 0; i < 6; i++) {
      await h.store.messages.insertReply({ conversationId: first.conversationId, kind: 'auto', msgId: `r-${i}`, replyTo: [], afterMessageId: 0, content: 'a', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: T0 + i });
    }
    const limited = bodyOf(await h.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'u1', content: 'q again' }, T0 + 30_000) }));
    assert.deepEqual(limited['reply'], { scheduled: false, reason: 'rate_limited' });
    const later = bodyOf(await h.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'u1', content: 'q later' }, T0 + 61_000) }));
    assert.deepEqual(later['reply'], { scheduled: true, reason: 'scheduled' });
  }));

  it('a quote of one of our replies addresses the bot in a group', withStore(async (h) => {
    const first = ok(await h.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'u1', group_id: 'g1', at_list: ['shop-bot'], content: 'q' }, T0) }));
    await h.store.messages.insertReply({ conversationId: first.conversationId, kind: 'auto', msgId: 'our-reply', replyTo: [], afterMessageId: 0, content: 'a', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: T0 });
    const quoting = bodyOf(await h.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'u2', group_id: 'g1', message_type: 2, quote: { msg_id: 'our-reply', message_type: 1 }, content: 'and this?' }, T0 + 1) }));
    assert.deepEqual(quoting['reply'], { scheduled: true, reason: 'scheduled' });
  }));

  it('the request log keeps each request, and counts repeated refusals on one row', withStore(async (h) => {
    const entry = { at: T0, requestId: 'req-x', method: 'POST', path: '/custom-im/chat-messages', clientId: CLIENT, eventType: 'auto_dialog', msgId: 'm-x', conversationId: null, status: 401, code: 'bad_signature', latencyMs: 1.5, replayed: false, problem: null, remote: '127.0.0.1', verified: false };
    assert.equal(await h.run({ kind: 'request_log', entry, aggKey: 'k1' }), null);
    await h.run({ kind: 'request_log_count', aggKey: 'k1', count: 4, lastAt: T0 + 9_000, close: true });
    assert.deepEqual(await h.logged('req-x'), { count: 5, lastAt: T0 + 9_000, aggKey: null }, 'closed: later refusals start a row of their own');
    await h.run({ kind: 'request_log_count', aggKey: 'k1', count: 4, lastAt: T0 + 9_500, close: false });
    assert.deepEqual(await h.logged('req-x'), { count: 5, lastAt: T0 + 9_000, aggKey: null });
    assert.equal(await h.count('request_log'), 1);
  }));
}
