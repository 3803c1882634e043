import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { startReceiver, eventually, verifyDelivery, type Receiver } from './helpers/receiver.ts';
import { scriptedEngine } from './helpers/engines.ts';
import { openConsole, type ConsoleClient } from './helpers/console.ts';

const SECRET = 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz';
const ANN = { id: 'ann', name: 'Ann Operator' };

describe('operator replies (protocol section 7, v1.1)', () => {
  let h: Harness;
  let rx: Receiver;
  let other: Receiver;
  let c: ConsoleClient;
  let scripted: ReturnType<typeof scriptedEngine>;

  beforeEach(async () => {
    rx = await startReceiver('/hook', { now: () => h.clock.now() });
    other = await startReceiver('/per-message', { now: () => h.clock.now() });
    scripted = scriptedEngine();
    h = await startHarness({ engine: scripted.engine });
    h.addClient('acme', { sendUrl: rx.url, boundAccount: 'shop-bot' }, SECRET);
    c = await openConsole(h);
    await c.ok('setOperator', ANN);
  });
  afterEach(async () => {
    await c.close();
    await h.stop();
    await rx.close();
    await other.close();
  });

  /** A customer message; its auto reply waits for the quiet period, which only the test's clock ends. */
  async function customer(content: string, extra: Record<string, unknown> = {}): Promise<{ msgId: string; conversationId: string }> {
    const r = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-1', from_user_type: 2, content, ...extra });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return { msgId: String(r.body['msg_id']), conversationId: String(r.body['conversation_id']) };
  }
  const conversation = async (id: string) => (await c.ok('getConversations', { ids: [id] }))[0]!;
  const operatorEntry = async (conversationId: string, msgId: string) =>
    (await c.ok('getTranscript', { conversationId })).entries.find((e) => e.msgId === msgId);

  it('is an auto reply\'s delivery from staff: signed, from_user_type 3, the bound account, the customer, reply_to and operator', async () => {
    const m1 = await customer('where is my parcel?');
    const m2 = await customer('hello??');
    const sent = await c.ok('sendReply', { conversationId: m1.conversationId, content: 'Checking now, one moment.' });
    const r = await eventually(() => rx.received[0], 'the operator reply');
    assert.ok(verifyDelivery(r, SECRET), 'signed like an auto reply, with the client secret');
    assert.equal(r.key, sent.msgId, 'Idempotency-Key is the reply msg_id');
    const { create_timestamp, ...info } = r.body.message_info;
    assert.deepEqual(info, {
      msg_id: sent.msgId,
      reply_to: [m1.msgId, m2.msgId],
      conversation_id: m1.conversationId,
      from_user_id: 'shop-bot',
      to_user_id: 'cust-1',
      content: 'Checking now, one moment.',
      message_type: 1,
      event_type: 'auto_dialog',
      from_user_type: 3,
      operator: ANN,
    });
    assert.equal(create_timestamp, h.now());
    const entry = await eventually(async () => {
      const e = await operatorEntry(m1.conversationId, sent.msgId);
      return e?.delivery?.state === 'sent' && e;
    }, 'the reply as sent in the transcript');
    assert.deepEqual(
      { kind: entry.kind, role: entry.role, operator: entry.operator, speakerName: entry.speakerName, content: entry.content, delivery: entry.delivery?.id },
      { kind: 'reply', role: 'staff', operator: ANN, speakerName: ANN.name, content: 'Checking now, one moment.', delivery: sent.deliveryId },
    );
    // The next reply answers only what the customer said since.
    const m3 = await customer('thanks, and the invoice?');
    await c.ok('sendReply', { conversationId: m1.conversationId, content: 'Invoice attached.' });
    const second = await eventually(() => rx.received[1], 'the second reply');
    assert.deepEqual(second.body.message_info['reply_to'], [m3.msgId]);
  });

  it('goes to the send_url of the conversation\'s latest auto_dialog message, else the client default', async () => {
    const m = await customer('hi', { send_url: other.url });
    assert.deepEqual((await c.ok('getTranscript', { conversationId: m.conversationId })).sendTarget, { ok: true, url: other.url });
    await c.ok('sendReply', { conversationId: m.conversationId, content: 'to the per-message URL' });
    await eventually(() => other.received.length === 1, 'delivered to the message\'s send_url');
    await customer('and now without one');
    assert.deepEqual((await c.ok('getTranscript', { conversationId: m.conversationId })).sendTarget, { ok: true, url: rx.url });
    await c.ok('sendReply', { conversationId: m.conversationId, content: 'to the client default' });
    await eventually(() => rx.received.length === 1, 'delivered to the client default');
    assert.equal(rx.received[0]!.body.message_info['content'], 'to the client default');
    assert.equal(other.received.length, 1);
  });

  it('in a group goes to the asker with at_list; reply_to can name the messages it answers', async () => {
    const group = { group_id: 'g-1', at_list: ['shop-bot'] };
    const a = await customer('question from seven', { ...group, from_user_id: 'cust-7' });
    const b = await customer('question from eight', { ...group, from_user_id: 'cust-8' });
    await c.ok('sendReply', { conversationId: a.conversationId, content: 'answering both' });
    const first = await eventually(() => rx.received[0], 'the group reply');
    assert.deepEqual(
      { reply_to: first.body.message_info['reply_to'], to: first.body.message_info['to_user_id'], at: first.body.message_info['at_list'], group: first.body.message_info['group_id'] },
      { reply_to: [a.msgId, b.msgId], to: 'cust-8', at: ['cust-8'], group: 'g-1' },
    );
    await c.ok('sendReply', { conversationId: a.conversationId, content: 'just for seven', replyTo: [a.msgId] });
    const second = await eventually(() => rx.received[1], 'the reply to cust-7');
    assert.deepEqual([second.body.message_info['reply_to'], second.body.message_info['to_user_id'], second.body.message_info['at_list']], [[a.msgId], 'cust-7', ['cust-7']]);
    // A group member who did not address the bot asked it nothing: the reply still goes to the asker.
    const asked = await customer('@shop-bot where is my invoice?', { ...group, from_user_id: 'cust-9' });
    await customer('anyone know if the store is open Sunday?', { group_id: 'g-1', at_list: [], from_user_id: 'cust-10' });
    await c.ok('sendReply', { conversationId: a.conversationId, content: 'your invoice is on its way' });
    const third = await eventually(() => rx.received[2], 'the reply to cust-9');
    assert.deepEqual([third.body.message_info['reply_to'], third.body.message_info['to_user_id'], third.body.message_info['at_list']], [[asked.msgId], 'cust-9', ['cust-9']]);
    const unknown = await c.call('sendReply', { conversationId: a.conversationId, content: 'x', replyTo: ['no-such-msg'] });
    assert.equal(!unknown.ok && unknown.error.code, 'invalid_input');
    assert.match(!unknown.ok ? unknown.error.message : '', /no-such-msg is not a customer message of this conversation/);
  });

  it('in a web conversation goes to the client default as a website_dialog', async () => {
    const w = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'visitor-1', content: 'opening hours?' });
    const conversationId = String(w.body['conversation_id']);
    const sent = await c.ok('sendReply', { conversationId, content: 'We open at nine.' });
    const r = await eventually(() => rx.received[0], 'the web reply');
    assert.ok(verifyDelivery(r, SECRET));
    const { create_timestamp: _ts, ...info } = r.body.message_info;
    assert.deepEqual(info, {
      msg_id: sent.msgId,
      reply_to: [],
      conversation_id: conversationId,
      from_user_id: 'shop-bot',
      to_user_id: 'visitor-1',
      content: 'We open at nine.',
      message_type: 1,
      event_type: 'website_dialog',
      from_user_type: 3,
      operator: ANN,
    });
  });

  it('without a send_url to reach, the console is told why and how to set one, and nothing is stored', async () => {
    h.addClient('bare', {}, SECRET);
    const w = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'v', content: 'hi' }, { client: 'bare' });
    const web = String(w.body['conversation_id']);
    const target = (await c.ok('getTranscript', { conversationId: web })).sendTarget;
    assert.equal(target.ok, false);
    assert.match(!target.ok ? target.reason : '', /web conversation is answered at its client's default send_url, and client bare has none.*`npm run cli -- clients set bare --send-url URL` or in the Clients view/);
    const refused = await c.call('sendReply', { conversationId: web, content: 'hello?' });
    assert.deepEqual(refused, { ok: false, error: { code: 'no_send_url', message: !target.ok ? target.reason : '' } });
    // An im conversation made by stop_auto_reply has no auto_dialog message to take a send_url from.
    const s = await h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: 'cust-2', content: 'stop_auto_reply' }, { client: 'bare' });
    const im = await c.call('sendReply', { conversationId: String(s.body['conversation_id']), content: 'hello?' });
    assert.equal(!im.ok && im.error.code, 'no_send_url');
    assert.match(!im.ok ? im.error.message : '', /latest auto_dialog message of this conversation carried none and client bare has no default send_url/);
    assert.equal(h.admin.deliveries.list(undefined, 10).length, 0);
  });

  it('pauses auto-reply like a staff message, and that pause never cancels it: a failed try is retried and sent', async () => {
    rx.respond = (_r, i) => (i === 0 ? { status: 500 } : { status: 200 });
    const m = await customer('is anyone there?');
    const sent = await c.ok('sendReply', { conversationId: m.conversationId, content: 'Yes, I am here.' });
    await eventually(() => rx.received.length === 1, 'the first try (500)');
    const paused = await conversation(m.conversationId);
    assert.deepEqual([paused.autoReply, paused.pausedUntil], ['paused', h.clock.now() + 10 * 60_000]);
    h.clock.advance(2000); // the customer's quiet period ends: the AI's answer is made while a human took over
    await eventually(async () => (await c.ok('getTranscript', { conversationId: m.conversationId })).entries[0]?.decision?.outcome === 'cancelled', 'the auto reply cancelled');
    h.clock.advance(3000); // the operator reply's first retry, 5 s after its try
    await eventually(() => rx.received.length === 2, 'the retry');
    const entry = await eventually(async () => {
      const e = await operatorEntry(m.conversationId, sent.msgId);
      return e?.delivery?.state === 'sent' && e;
    }, 'sent');
    assert.equal(entry.delivery?.attempts, 2);
    assert.deepEqual(rx.received.map((r) => r.body.message_info['from_user_type']), [3, 3], 'the AI reply was never sent');
  });

  it('a stopped conversation stays stopped, and the reply still goes', async () => {
    const m = await customer('stop the bot please');
    await c.ok('stopAutoReply', { conversationId: m.conversationId });
    await c.ok('sendReply', { conversationId: m.conversationId, content: 'Done, a human is here.' });
    await eventually(() => rx.received.length === 1, 'delivered');
    assert.equal((await conversation(m.conversationId)).autoReply, 'stopped');
  });

  it('clears needs_human', async () => {
    scripted.answer(() => ({ content: '', handoff: true, confidence: 0, sources: [] }));
    const m = await customer('something the bot cannot answer');
    h.clock.advance(2000);
    await eventually(async () => (await conversation(m.conversationId)).needsHuman, 'the handoff flags needs_human');
    await c.ok('sendReply', { conversationId: m.conversationId, content: 'Let me help.' });
    const after = await conversation(m.conversationId);
    assert.deepEqual([after.needsHuman, after.needsHumanSince], [false, null]);
  });

  it('retries, goes dead like any delivery, and the operator can retry it', async () => {
    rx.respond = () => ({ status: 410 });
    const m = await customer('hi');
    const sent = await c.ok('sendReply', { conversationId: m.conversationId, content: 'hello' });
    await eventually(async () => (await operatorEntry(m.conversationId, sent.msgId))?.delivery?.state === 'dead', 'dead at once on a permanent 4xx');
    const listed = await c.ok('listDeliveries', {});
    assert.deepEqual(listed.map((d) => [d.id, d.kind, d.state, d.lastStatus]), [[sent.deliveryId, 'operator', 'dead', 410]]);
    rx.respond = () => ({ status: 200 });
    assert.deepEqual(await c.ok('retryDelivery', { deliveryId: sent.deliveryId }), { retried: true });
    await eventually(async () => (await operatorEntry(m.conversationId, sent.msgId))?.delivery?.state === 'sent', 'sent after the retry');
    assert.equal(rx.received.length, 2);
  });

  it('keeps order: a reply waits behind an earlier pending delivery of the same conversation', async () => {
    rx.respond = (_r, i) => (i === 0 ? { status: 503 } : { status: 200 });
    const m = await customer('hi');
    await c.ok('sendReply', { conversationId: m.conversationId, content: 'first' });
    await eventually(() => rx.received.length === 1, 'the first try of the first reply');
    await c.ok('sendReply', { conversationId: m.conversationId, content: 'second' });
    await h.quiesce();
    assert.equal(rx.received.length, 1, 'the second waits behind the first');
    h.clock.advance(5000);
    await eventually(() => rx.received.length === 3, 'both, in order');
    assert.deepEqual(rx.received.map((r) => r.body.message_info['content']), ['first', 'first', 'second']);
  });

  it('an AI reply waiting for a retry is cancelled at once by the takeover, not holding the operator reply behind its back-off', async () => {
    rx.respond = (r) => (r.body.message_info['from_user_type'] === 4 ? { status: 503 } : { status: 200 });
    const m = await customer('hi');
    h.clock.advance(2000);
    await eventually(() => rx.received.length === 1, 'the AI reply fails once');
    await c.ok('sendReply', { conversationId: m.conversationId, content: 'a human answer' });
    await eventually(() => rx.received.length === 2, 'the operator reply, without the clock moving');
    assert.equal(rx.received[1]!.body.message_info['from_user_type'], 3);
    const ai = h.admin.deliveries.list(undefined, 10).find((d) => d.kind === 'auto')!;
    assert.equal(ai.state, 'cancelled');
    assert.match(ai.lastError ?? '', /auto-reply paused when the delivery was due/);
  });
});
