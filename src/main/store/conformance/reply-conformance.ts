import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { ReplyStore } from '../contract.ts';
import type { IngestCommand, Outcome } from '../../conversations/ingest-commands.ts';
import type { MessageInfo } from '../../../shared/protocol/message-schema.ts';
import type { NewReply } from '../messages.ts';
import { commitAutoReply } from '../../autoreply/reply-commands.ts';
import { CLIENT, request, T0 } from './ingest-conformance.ts';

/** One store under test for the auto reply's functions (ReplyStore). */
export interface ReplyHarness {
  /** Sets the scene the way the endpoint does (its ingest command in that store's transaction). */
  ingest(command: IngestCommand): Promise<Outcome | null>;
  /** The functions outside any transaction. */
  store: ReplyStore;
  /** `work` in that store's transaction (the writer's, a PostgreSQL one). */
  transaction<T>(work: (store: ReplyStore) => Promise<T>): Promise<T>;
  delivery(id: number): Promise<{ kind: string; replyId: number; state: string; origin: string; sendUrl: string; messageInfo: string; nextAttemptAt: number; createdAt: number; updatedAt: number } | undefined>;
  trace(messageId: number): Promise<{ outcome: string | null; replyMsgId: string | null; note: string | null } | undefined>;
  close(): Promise<void>;
}

const ok = (o: Outcome | null): Extract<Outcome, { kind: 'ok' }> => {
  assert.equal(o?.kind, 'ok', JSON.stringify(o));
  return o as Extract<Outcome, { kind: 'ok' }>;
};

const reply = (conversationId: string, over: Partial<NewReply> & Pick<NewReply, 'msgId' | 'createdAt'>): NewReply => ({
  conversationId,
  kind: 'auto',
  replyTo: [],
  afterMessageId: 0,
  content: 'ok',
  handoff: false,
  engine: 'kb',
  confidence: 1,
  sources: [],
  ...over,
});

/**
 * The auto reply's store functions as both stores must give them (reply-sqlite.test.ts,
 * reply-postgres.test.ts): pending messages, settling, the per-minute cap's times, the engine's
 * context lines, a reply's delivery, and commitAutoReply made of them.
 */
export function replyConformance(open: () => Promise<ReplyHarness>): void {
  const withStore = (fn: (h: ReplyHarness) => Promise<void>) => async () => {
    const h = await open();
    try {
      await fn(h);
    } finally {
      await h.close();
    }
  };
  const say = async (h: ReplyHarness, info: Partial<MessageInfo>, at: number) =>
    ok(await h.ingest({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'u1', ...info }, at) }));

  it('pending replies: one conversation’s or everyone’s, oldest first, with send_url, timestamps and empty text for none', withStore(async (h) => {
    const a = await say(h, { content: 'first', send_url: 'https://im.example/send', create_timestamp: 1_800_000_000 }, T0);
    await say(h, { from_user_id: 'u2', content: 'other customer' }, T0 + 1);
    await say(h, { files_info: [{ file_type: 1, content: 'https://im.example/a.png' }] }, T0 + 2);
    const mine = await h.store.messages.pendingReplies(a.conversationId);
    assert.deepEqual(
      mine.map(({ id: _, ...p }) => p),
      [
        { conversationId: a.conversationId, clientId: CLIENT, msgId: a.msgId, fromUserId: 'u1', content: 'first', sendUrl: 'https://im.example/send', createTimestamp: 1_800_000_000, receivedAt: T0 },
        { conversationId: a.conversationId, clientId: CLIENT, msgId: mine[1]!.msgId, fromUserId: 'u1', content: '', sendUrl: null, createTimestamp: null, receivedAt: T0 + 2 },
      ],
    );
    assert.ok(mine.every((p) => typeof p.id === 'number') && mine[0]!.id < mine[1]!.id);
    const all = await h.store.messages.pendingReplies();
    assert.deepEqual(all.map((p) => [p.content, p.receivedAt]), [['first', T0], ['other customer', T0 + 1], ['', T0 + 2]]);
    assert.deepEqual(await h.store.messages.pendingReplies('no-such-conversation'), []);
  }));

  it('settling a pending message keeps its first outcome', withStore(async (h) => {
    const a = await say(h, { content: 'q' }, T0);
    const [p] = await h.store.messages.pendingReplies(a.conversationId);
    assert.equal(await h.store.messages.settleReply(p!.id, 'stale', null, 'too old'), true);
    assert.equal(await h.store.messages.settleReply(p!.id, 'answered', 'r-1', null), false, 'settled once');
    assert.deepEqual(await h.trace(p!.id), { outcome: 'stale', replyMsgId: null, note: 'too old' });
    assert.deepEqual(await h.store.messages.pendingReplies(), []);
  }));

  it('auto reply times since a moment: auto replies only, from that moment on, oldest first', withStore(async (h) => {
    const a = await say(h, { content: 'q' }, T0);
    for (const [msgId, kind, at] of [['r3', 'auto', T0 + 3], ['r1', 'auto', T0 + 1], ['w', 'website', T0 + 2], ['s', 'suggestion', T0 + 2], ['r0', 'auto', T0 - 1]] as const) {
      const id = await h.store.messages.insertReply(reply(a.conversationId, { msgId, kind, createdAt: at }));
      assert.equal(typeof id, 'number');
    }
    assert.deepEqual(await h.store.messages.autoReplyTimesSince(a.conversationId, T0), [T0 + 1, T0 + 3]);
    assert.deepEqual(await h.store.messages.autoReplyTimesSince('other', T0 - 10), []);
  }));

  it('a conversation is flagged for a human once, and touched forward only', withStore(async (h) => {
    const a = await say(h, { content: 'q' }, T0);
    assert.equal(await h.store.conversations.flagNeedsHuman(a.conversationId, T0 + 5, 'no_answer'), true);
    assert.equal(await h.store.conversations.flagNeedsHuman(a.conversationId, T0 + 6, 'handoff'), false);
    await h.store.conversations.touch(a.conversationId, 2, T0 + 9);
    await h.store.conversations.touch(a.conversationId, 1, T0 + 7);
    const conv = (await h.store.conversations.byId(a.conversationId))!;
    assert.deepEqual([conv.needsHuman, conv.needsHumanSince, conv.needsHumanReason, conv.messageCount, conv.lastMessageAt], [true, T0 + 5, 'no_answer', 4, T0 + 9]);
    assert.equal(await h.store.conversations.byId('no-such-conversation'), undefined);
  }));

  it('a delivery is stored pending with its receiver’s origin', withStore(async (h) => {
    const a = await say(h, { content: 'q' }, T0);
    const replyId = await h.store.messages.insertReply(reply(a.conversationId, { msgId: 'r1', createdAt: T0 }));
    const id = await h.store.deliveries.insert({ replyId, replyMsgId: 'r1', conversationId: a.conversationId, clientId: CLIENT, sendUrl: 'https://im.example/send?x=1', messageInfo: '{"a":1}', state: 'pending', nextAttemptAt: T0 + 1, createdAt: T0 });
    assert.equal(typeof id, 'number');
    assert.deepEqual(await h.delivery(id), { kind: 'auto', replyId, state: 'pending', origin: 'https://im.example:443', sendUrl: 'https://im.example/send?x=1', messageInfo: '{"a":1}', nextAttemptAt: T0 + 1, createdAt: T0, updatedAt: T0 });
  }));

  it('the engine’s context: names, quotes, replies in place; no commands, suggestions or handoffs; newest lines up to a message', withStore(async (h) => {
    const a = await say(h, { from_user_nickname: 'Ann', content: 'Do you ship to Oslo?' }, T0);
    const first = (await h.store.messages.pendingReplies(a.conversationId))[0]!;
    await h.store.messages.insertReply(reply(a.conversationId, { msgId: 'r-ship', content: 'Yes, in 3 days.', afterMessageId: first.id, createdAt: T0 + 10 }));
    await h.store.messages.insertReply(reply(a.conversationId, { msgId: 'r-handoff', content: 'A human will answer.', handoff: true, afterMessageId: first.id, createdAt: T0 + 11 }));
    await h.store.messages.insertReply(reply(a.conversationId, { msgId: 's-1', kind: 'suggestion', content: 'draft', afterMessageId: first.id, createdAt: T0 + 12 }));
    await h.store.messages.insertReply(reply(a.conversationId, { msgId: 'op-1', kind: 'operator', operator: { id: 'ag1', name: 'Nora' }, content: 'Free shipping too.', afterMessageId: first.id, createdAt: T0 + 13 }));
    await say(h, { message_type: 2, quote: { msg_id: 'r-ship', message_type: 1 }, content: 'and to Bergen?' }, T0 + 20);
    await say(h, { message_type: 2, quote: { msg_id: first.msgId, message_type: 1 }, content: 'as I asked' }, T0 + 30);
    await say(h, { message_type: 2, quote: { msg_id: 'gone', message_type: 1, content: 'my own words' }, content: 'this one' }, T0 + 40);
    const last = (await h.store.messages.pendingReplies(a.conversationId)).at(-1)!;
    await say(h, { content: 'after' }, T0 + 50);
    const lines = await h.store.messages.context(a.conversationId, last.id, 10);
    assert.deepEqual(
      lines.map(({ id: _, ...l }) => l),
      [
        { kind: 'message', msgId: first.msgId, role: 'customer', speaker: 'Ann', speakerName: 'Ann', content: 'Do you ship to Oslo?', at: T0 },
        { kind: 'reply', msgId: 'r-ship', role: 'ai', speaker: null, content: 'Yes, in 3 days.', at: T0 + 10 },
        { kind: 'reply', msgId: 'op-1', role: 'staff', speaker: 'Nora', speakerName: 'Nora', content: 'Free shipping too.', at: T0 + 13 },
        { kind: 'message', msgId: lines[3]!.msgId, role: 'customer', speaker: 'Ann', speakerName: 'Ann', content: 'and to Bergen?', at: T0 + 20, quoted: { speaker: null, content: 'Yes, in 3 days.' } },
        { kind: 'message', msgId: lines[4]!.msgId, role: 'customer', speaker: 'Ann', speakerName: 'Ann', content: 'as I asked', at: T0 + 30, quoted: { speaker: 'Ann', content: 'Do you ship to Oslo?' } },
        { kind: 'message', msgId: last.msgId, role: 'customer', speaker: 'Ann', speakerName: 'Ann', content: 'this one', at: T0 + 40, quoted: { speaker: null, content: 'my own words' } },
      ],
    );
    assert.deepEqual((await h.store.messages.context(a.conversationId, last.id, 2)).map((l) => l.content), ['as I asked', 'this one'], 'the newest lines');
    assert.deepEqual(await h.store.messages.context('no-such-conversation', last.id, 10), []);
  }));

  it('commitAutoReply: an answer with its delivery; a handoff alerts once; a reply made after a human took over is kept, its delivery cancelled', withStore(async (h) => {
    const a = await say(h, { content: 'q1' }, T0);
    const p1 = await h.store.messages.pendingReplies(a.conversationId);
    const cmd = (ids: number[], msgId: string, handoff: boolean, now: number) => ({
      kind: 'auto_reply' as const, conversationId: a.conversationId, clientId: CLIENT, messageIds: ids, replyTo: ['x'], replyMsgId: msgId, engine: 'kb',
      answer: { content: handoff ? 'A human will answer.' : 'a1', handoff, confidence: 1, sources: [] }, delivery: { sendUrl: 'http://receiver/hook', messageInfo: '{}' }, now,
    });
    const answered = await h.transaction((s) => commitAutoReply(s, cmd(p1.map((p) => p.id), 'r-1', false, T0 + 2_000)));
    assert.equal(answered.outcome, 'answered');
    assert.equal((await h.delivery(answered.deliveryId!))!.state, 'pending');
    assert.deepEqual(await h.trace(p1[0]!.id), { outcome: 'answered', replyMsgId: 'r-1', note: null });
    assert.deepEqual([(await h.store.conversations.byId(a.conversationId))!.messageCount, (await h.store.conversations.byId(a.conversationId))!.lastMessageAt], [2, T0 + 2_000]);
    await say(h, { content: 'q2' }, T0 + 3_000);
    const p2 = await h.store.messages.pendingReplies(a.conversationId);
    const handoff = await h.transaction((s) => commitAutoReply(s, cmd(p2.map((p) => p.id), 'r-2', true, T0 + 5_000)));
    assert.deepEqual([handoff.outcome, handoff.alert], ['handoff', true]);
    assert.equal((await h.store.conversations.byId(a.conversationId))!.needsHumanReason, 'no_answer');
    await h.ingest({ kind: 'cmd_dialog', request: request({ event_type: 'cmd_dialog', from_user_id: 'u1', content: 'stop_auto_reply' }, T0 + 6_000) });
    const late = await h.transaction((s) => commitAutoReply(s, cmd([p2[0]!.id], 'r-3', false, T0 + 7_000)));
    assert.deepEqual([late.outcome, late.deliveryId, late.alert], ['cancelled', null, false]);
  }));
}
