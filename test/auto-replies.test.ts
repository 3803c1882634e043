import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { startReceiver, eventually, verifyDelivery, type Receiver } from './helpers/receiver.ts';
import { scriptedEngine } from './helpers/engines.ts';

const SECRET = 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz';

describe('auto replies: when to answer (section 6)', () => {
  let h: Harness;
  let rx: Receiver;
  let eng: ReturnType<typeof scriptedEngine>;
  const say = (content: string, extra: Record<string, unknown> = {}) =>
    h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-1', from_user_type: 2, content, ...extra });

  beforeEach(async () => {
    rx = await startReceiver('/hook', { now: () => h.clock.now() });
    eng = scriptedEngine();
    h = await startHarness({ engine: eng.engine });
    h.addClient('acme', { sendUrl: rx.url, boundAccount: 'bot-acme' }, SECRET);
  });
  afterEach(async () => {
    await h.stop();
    await rx.close();
  });

  it('waits for the quiet period, then delivers a signed reply per section 7', async () => {
    const m = await say('How do I reset my password?');
    h.clock.advance(1999);
    await h.quiesce();
    assert.equal(rx.received.length, 0, 'nothing before the quiet period ends');
    h.clock.advance(1);
    const [d] = await eventually(() => rx.received.length === 1 && rx.received, 'the delivery');
    assert.ok(verifyDelivery(d!, SECRET), 'signed with the client secret, verifiable as section 3');
    assert.equal(d!.headers['content-type'], 'application/json');
    const info = d!.body.message_info;
    assert.equal(d!.key, info['msg_id'], 'Idempotency-Key is the reply msg_id');
    assert.match(String(info['msg_id']), /^r_/);
    assert.deepEqual(info['reply_to'], [m.body['msg_id']]);
    assert.equal(info['conversation_id'], m.body['conversation_id']);
    assert.equal(info['to_user_id'], 'cust-1');
    assert.equal(info['from_user_id'], 'bot-acme');
    assert.equal(info['content'], 'answer to: How do I reset my password?');
    assert.equal(info['message_type'], 1);
    assert.equal(info['event_type'], 'auto_dialog');
    assert.equal(info['from_user_type'], 4);
    assert.equal(info['create_timestamp'], h.now());
    assert.equal(d!.body.client, 'acme');
    assert.equal(d!.body.timestamp, h.now());
  });

  it('merges a burst into one engine call and one reply covering every message', async () => {
    const ids: unknown[] = [];
    for (const text of ['hi', 'I have a question', 'about my invoice']) {
      ids.push((await say(text)).body['msg_id']);
      h.clock.advance(1000);
    }
    h.clock.advance(1000);
    await eventually(() => rx.received.length === 1, 'one delivery');
    assert.equal(eng.calls.length, 1);
    assert.deepEqual(rx.received[0]!.body.message_info['reply_to'], ids);
    assert.deepEqual(eng.calls[0]!.context.map((l) => l.content), ['hi', 'I have a question', 'about my invoice']);
  });

  it('never waits more than the cap (10 s) after the first pending message', async () => {
    for (let i = 0; i < 7; i++) {
      await say(`message ${i}`);
      h.clock.advance(1500);
    }
    // 7 messages 1.5 s apart: the last quiet period never ends, the cap at 10 s does.
    await eventually(() => rx.received.length === 1, 'a capped reply');
    assert.equal((rx.received[0]!.body.message_info['reply_to'] as string[]).length, 7);
  });

  it('drops an answer overtaken by a new message, and answers all of them afterwards', async () => {
    eng.hold();
    await say('first question');
    h.clock.advance(2000);
    await eventually(() => eng.waiting() === 1, 'the engine working');
    await say('and a second one');
    eng.release();
    await h.quiesce();
    assert.equal(rx.received.length, 0, 'the first answer was dropped');
    h.clock.advance(2000);
    await eventually(() => rx.received.length === 1, 'the redo');
    assert.equal(eng.calls.length, 2);
    assert.equal((rx.received[0]!.body.message_info['reply_to'] as string[]).length, 2);
    assert.equal(rx.received[0]!.body.message_info['content'], 'answer to: and a second one');
  });

  it('in a group, answers the asker with an @-mention', async () => {
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), group_id: 'room-9', from_user_id: 'u-7', from_user_type: 2, at_list: ['bot-acme'], content: 'help?' });
    h.clock.advance(2000);
    const [d] = await eventually(() => rx.received.length === 1 && rx.received, 'the delivery');
    const info = d!.body.message_info;
    assert.equal(info['group_id'], 'room-9');
    assert.equal(info['to_user_id'], 'u-7');
    assert.deepEqual(info['at_list'], ['u-7']);
  });

  it('a group message that names no sender is answered in the group, without to_user_id (it was a dead delivery)', async () => {
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), group_id: 'room-anon', from_user_type: 1, at_list: ['bot-acme'], content: 'anyone?' });
    h.clock.advance(2000);
    const [d] = await eventually(() => rx.received.length === 1 && rx.received, 'the delivery');
    const info = d!.body.message_info;
    assert.equal(info['group_id'], 'room-anon');
    assert.equal('to_user_id' in info, false);
    assert.equal('at_list' in info, false);
    assert.equal(h.admin.deliveries.list('dead', 10).length, 0);
  });

  describe('in a group, one reply per customer (section 6)', () => {
    const ask = (from: string, content: string) =>
      h.post({ event_type: 'auto_dialog', msg_id: mid(), group_id: 'room-2', from_user_id: from, from_user_type: 2, at_list: ['bot-acme'], content });
    const traceOf = (msgId: unknown) => h.admin.messages.replyTrace(h.admin.messages.findAutoMessage('acme', String(msgId))!.id)!;
    const deliveryFor = (customer: string) => rx.received.find((d) => d.body.message_info['to_user_id'] === customer)!;

    it('two customers asking different questions get a reply each, addressed to them, answering only their messages', async () => {
      const a = await ask('alice', 'Where is my parcel?');
      const b = await ask('bob', 'How do I change my password?');
      h.clock.advance(2000);
      await eventually(() => rx.received.length === 2, 'two deliveries');
      await h.quiesce();
      assert.equal(rx.received.length, 2);
      assert.equal(eng.calls.length, 2, 'one engine call per customer');
      for (const [customer, m, question] of [['alice', a, 'Where is my parcel?'], ['bob', b, 'How do I change my password?']] as const) {
        const info = deliveryFor(customer).body.message_info;
        assert.equal(info['group_id'], 'room-2');
        assert.equal(info['to_user_id'], customer);
        assert.deepEqual(info['at_list'], [customer]);
        assert.deepEqual(info['reply_to'], [m.body['msg_id']], `${customer}'s reply answers only ${customer}'s message`);
        assert.equal(info['content'], `answer to: ${question}`);
        assert.ok(verifyDelivery(deliveryFor(customer), SECRET));
        assert.equal(traceOf(m.body['msg_id']).outcome, 'answered');
        assert.equal(traceOf(m.body['msg_id']).replyMsgId, info['msg_id'], `${customer}'s trace points at ${customer}'s own reply`);
      }
      assert.notEqual(deliveryFor('alice').key, deliveryFor('bob').key);
    });

    it('a customer who sends twice gets one reply for both; the engine sees both customers\' lines', async () => {
      const a1 = await ask('alice', 'hello');
      h.clock.advance(500);
      const b1 = await ask('bob', 'is the shop open today?');
      h.clock.advance(500);
      const a2 = await ask('alice', 'my order 42 is late');
      h.clock.advance(2000);
      await eventually(() => rx.received.length === 2, 'two deliveries');
      await h.quiesce();
      assert.equal(rx.received.length, 2, 'alice twice and bob once: two replies');
      assert.deepEqual(deliveryFor('alice').body.message_info['reply_to'], [a1.body['msg_id'], a2.body['msg_id']]);
      assert.deepEqual(deliveryFor('bob').body.message_info['reply_to'], [b1.body['msg_id']]);
      const lines = (c: (typeof eng.calls)[number]) => c.context.map((l) => `${l.speaker}: ${l.content}`);
      const forAlice = eng.calls.find((c) => c.context.at(-1)?.speaker === 'alice')!;
      const forBob = eng.calls.find((c) => c.context.at(-1)?.speaker === 'bob')!;
      assert.deepEqual(lines(forAlice), ['alice: hello', 'bob: is the shop open today?', 'alice: my order 42 is late'], 'the group up to alice\'s last message');
      assert.deepEqual(lines(forBob), ['alice: hello', 'bob: is the shop open today?'], 'the group up to bob\'s last message');
      assert.ok(forAlice.isGroup && forBob.isGroup);
      assert.equal(traceOf(a1.body['msg_id']).replyMsgId, deliveryFor('alice').body.message_info['msg_id']);
      assert.equal(traceOf(a2.body['msg_id']).replyMsgId, deliveryFor('alice').body.message_info['msg_id']);
      assert.equal(traceOf(b1.body['msg_id']).replyMsgId, deliveryFor('bob').body.message_info['msg_id']);
    });

    it('a new message while the engine works drops the answers and redoes them, still one per customer', async () => {
      eng.hold();
      await ask('alice', 'first');
      await ask('bob', 'second');
      h.clock.advance(2000);
      await eventually(() => eng.waiting() === 2, 'both engine calls working');
      await ask('carol', 'third');
      eng.release();
      await h.quiesce();
      assert.equal(rx.received.length, 0, 'the overtaken answers were dropped');
      h.clock.advance(2000);
      await eventually(() => rx.received.length === 3, 'three deliveries');
      assert.deepEqual(rx.received.map((d) => d.body.message_info['to_user_id']).sort(), ['alice', 'bob', 'carol']);
    });

    it('the 6-per-minute cap counts each reply: a seventh customer waits for a free slot, then is answered', async () => {
      const asked = [];
      for (let i = 1; i <= 7; i++) asked.push(await ask(`cust-${i}`, `question ${i}`));
      assert.ok(asked.every((m) => (m.body['reply'] as { scheduled: boolean }).scheduled));
      h.clock.advance(2000);
      await eventually(() => rx.received.length === 6, 'six replies');
      await h.quiesce();
      assert.equal(rx.received.length, 6, 'no more than six in the minute');
      assert.equal(traceOf(asked[6]!.body['msg_id']).outcome, 'pending', 'the seventh still waits, it is not dropped');
      h.clock.advance(60_000);
      await h.quiesce();
      assert.equal(rx.received.length, 6, 'the first six still count at exactly 60 s');
      h.clock.advance(1);
      await eventually(() => rx.received.length === 7, 'the seventh reply once a slot frees');
      assert.equal(rx.received[6]!.body.message_info['to_user_id'], 'cust-7');
    });
  });

  it('a handoff sends nothing and flags needs_human; a fallback text is sent when configured', async () => {
    eng.answer(() => ({ content: '', handoff: true, confidence: 0.1, sources: [], cause: 'no entry above 0.45' }));
    const m = await say('something odd');
    h.clock.advance(2000);
    await eventually(() => h.admin.conversations.byId(String(m.body['conversation_id']))?.needsHuman, 'needs_human');
    assert.equal(h.admin.conversations.byId(String(m.body['conversation_id']))?.needsHumanReason, 'no_answer', 'Needs you says why');
    await h.quiesce();
    assert.equal(rx.received.length, 0);
    const row = h.admin.messages.findAutoMessage('acme', String(m.body['msg_id']))!;
    assert.deepEqual({ ...h.admin.messages.replyTrace(row.id), replyMsgId: 'r' }, { scheduled: true, reason: 'scheduled', outcome: 'handoff', replyMsgId: 'r', note: 'no entry above 0.45' });

    h.addClient('polite', { sendUrl: rx.url, fallbackText: 'A colleague will answer shortly.' }, SECRET);
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'c9', from_user_type: 2, content: 'odd again' }, { client: 'polite' });
    h.clock.advance(2000);
    await eventually(() => rx.received.length === 1, 'the fallback');
    assert.equal(rx.received[0]!.body.message_info['content'], 'A colleague will answer shortly.');
  });

  it('a failing engine is a handoff with its cause, not a lost message', async () => {
    eng.answer(() => {
      throw new Error('model exploded');
    });
    const m = await say('hello?');
    h.clock.advance(2000);
    const row = h.admin.messages.findAutoMessage('acme', String(m.body['msg_id']))!;
    const trace = await eventually(() => h.admin.messages.replyTrace(row.id)?.outcome === 'handoff' && h.admin.messages.replyTrace(row.id), 'handoff');
    assert.match(trace.note ?? '', /model exploded/);
  });

  it('a reply made while a human took over is never sent (re-checked before handing it to delivery)', async () => {
    eng.hold();
    const m = await say('question');
    h.clock.advance(2000);
    await eventually(() => eng.waiting() === 1, 'the engine working');
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'agent-1', from_user_type: 3, to_user_id: 'cust-1', content: 'I will take this one' });
    eng.release();
    const row = h.admin.messages.findAutoMessage('acme', String(m.body['msg_id']))!;
    await eventually(() => h.admin.messages.replyTrace(row.id)?.outcome === 'cancelled', 'cancelled');
    h.clock.advance(60_000);
    await h.quiesce();
    assert.equal(rx.received.length, 0);
    assert.equal(h.admin.deliveries.list('cancelled', 10).length, 1, 'the cancelled reply stays visible in the trace');
  });

  it('stop_auto_reply before the quiet period ends: the pending message is never answered', async () => {
    const m = await say('question');
    const stop = await h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: 'cust-1', content: 'stop_auto_reply' });
    assert.equal(stop.body['cancelled_replies'], 0, 'no reply existed yet');
    h.clock.advance(5000);
    await h.quiesce();
    assert.equal(rx.received.length, 0);
    const row = h.admin.messages.findAutoMessage('acme', String(m.body['msg_id']))!;
    assert.equal(h.admin.messages.replyTrace(row.id)?.outcome, 'cancelled');
  });

  it('at most 6 auto replies per conversation per minute', async () => {
    for (let i = 0; i < 6; i++) {
      await say(`q${i}`);
      h.clock.advance(2000);
      await eventually(() => rx.received.length === i + 1, `reply ${i + 1}`);
    }
    const seventh = await say('q7');
    assert.deepEqual(seventh.body['reply'], { scheduled: false, reason: 'rate_limited' });
    h.clock.advance(60_000);
    assert.equal(((await say('q8')).body['reply'] as { reason: string }).reason, 'scheduled');
  });

  it('a pending reply survives a restart: the quiet period resumes and the message is answered', async () => {
    await say('asked just before the restart');
    h.clock.advance(1000);
    await h.restart();
    h.clock.advance(1000);
    await eventually(() => rx.received.length === 1, 'the reply after restart');
  });

  /** A customer message, then a console stop half a second into its quiet period. */
  const strayStop = async () => {
    const handlers = () => h.service.console.asOwner;
    await handlers().setOperator({ id: 'ann', name: 'Ann' });
    const m = await say('asked just before a stray stop');
    const conversationId = String(m.body['conversation_id']);
    h.clock.advance(500);
    await handlers().stopAutoReply({ conversationId });
    return { handlers, m, conversationId };
  };

  it('a console stop undone in the quiet period, then a restart: the message is still answered', async () => {
    const { handlers, m, conversationId } = await strayStop();
    await handlers().resumeAutoReply({ conversationId, undoStop: true });
    // Down before the quiet period ended: the start-up load of pending messages finds it.
    await h.restart();
    h.clock.advance(1500);
    const [d] = await eventually(() => rx.received.length === 1 && rx.received, 'the reply after restart');
    assert.deepEqual(d!.body.message_info['reply_to'], [m.body['msg_id']]);
  });

  it('a colleague speaks in the IM during a stray stop, then Undo: the bot stays held off by them, as without the stop', async () => {
    const { handlers, m, conversationId } = await strayStop();
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'agent-1', from_user_type: 3, to_user_id: 'cust-1', content: 'I will take this one' });
    await handlers().resumeAutoReply({ conversationId, undoStop: true });
    const row = h.admin.messages.findAutoMessage('acme', String(m.body['msg_id']))!;
    h.clock.advance(5_000);
    await eventually(() => h.admin.messages.replyTrace(row.id)?.outcome === 'cancelled', 'settled by the pause');
    await h.quiesce();
    assert.equal(rx.received.length, 0, 'the bot did not answer over the colleague');
    assert.equal(h.admin.conversations.byId(conversationId)?.autoReply, 'paused');
  });

  it('the integration stops the conversation itself during a stray stop: Undo changes nothing and says why', async () => {
    const { handlers, conversationId } = await strayStop();
    await h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: 'cust-1', content: 'stop_auto_reply' });
    const undo = await handlers().resumeAutoReply({ conversationId, undoStop: true });
    assert.deepEqual(undo, { previous: 'stopped', restoredReplies: 0, undo: 'stopped_elsewhere' });
    assert.equal(h.admin.conversations.byId(conversationId)?.autoReply, 'stopped', 'the integration’s stop holds');
    // Nothing was written, so a second Undo finds the same, and so does a late one.
    assert.equal((await handlers().resumeAutoReply({ conversationId, undoStop: true })).undo, 'stopped_elsewhere');
    h.clock.advance(20_000);
    assert.equal((await handlers().resumeAutoReply({ conversationId, undoStop: true })).undo, 'expired');
    assert.equal(h.admin.conversations.byId(conversationId)?.autoReply, 'stopped', 'a late Undo does not resume over the integration');
  });

  it('Undo refuses, changing nothing, when there is no console stop of its own to take back', async () => {
    const handlers = () => h.service.console.asOwner;
    await handlers().setOperator({ id: 'ann', name: 'Ann' });
    // Never stopped: a colleague's pause (staff spoke in the IM) must not be woken by it.
    const m = await say('hello?');
    const conversationId = String(m.body['conversation_id']);
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'agent-1', from_user_type: 3, to_user_id: 'cust-1', content: 'on it' });
    assert.equal(h.admin.conversations.byId(conversationId)?.autoReply, 'paused');
    assert.deepEqual(await handlers().resumeAutoReply({ conversationId, undoStop: true }), { previous: 'paused', restoredReplies: 0, undo: 'not_stopped' });
    assert.equal(h.admin.conversations.byId(conversationId)?.autoReply, 'paused');
    // The integration stopped it first, then a console stop found it stopped: Undo leaves it stopped.
    await h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: 'cust-1', content: 'stop_auto_reply' });
    await handlers().stopAutoReply({ conversationId });
    assert.equal((await handlers().resumeAutoReply({ conversationId, undoStop: true })).undo, 'was_stopped');
    assert.equal(h.admin.conversations.byId(conversationId)?.autoReply, 'stopped');
    assert.ok(!h.admin.audit.list(conversationId, 10).some((a) => a.action === 'resume'), 'no resume recorded by any of these');
  });

  it('after a long outage, a pending message past the stale limit is not answered', async () => {
    const m = await say('asked before the outage');
    await h.restart(11 * 60_000);
    const row = h.admin.messages.findAutoMessage('acme', String(m.body['msg_id']))!;
    await eventually(() => h.admin.messages.replyTrace(row.id)?.outcome === 'stale', 'stale');
    assert.equal(rx.received.length, 0);
  });
});
