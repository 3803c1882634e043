import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { startReceiver, eventually, type Receiver } from './helpers/receiver.ts';
import { scriptedEngine } from './helpers/engines.ts';
import { openConsole, type ConsoleClient } from './helpers/console.ts';
import type { ConsoleEvent } from '../src/shared/console-api.ts';

const MIN = 60_000;
type Alert = Extract<ConsoleEvent, { type: 'alert' }>;

// Staff who take a conversation over in the IM answer there: the console stays quiet, unless the
// customer's message goes unanswered for staffWaitMinutes (10 by default).
describe('a customer left waiting by staff who took over in the IM', () => {
  let h: Harness;
  let rx: Receiver;
  let c: ConsoleClient;
  const scripted = scriptedEngine();

  before(async () => {
    rx = await startReceiver();
    scripted.answer((r) => ({ content: `answer to: ${r.context.filter((l) => l.role === 'customer').at(-1)?.content ?? ''}`, handoff: false, confidence: 1, sources: [] }));
    h = await startHarness({ engine: scripted.engine });
    h.addClient('acme', { sendUrl: rx.url, boundAccount: 'shop-bot', pauseMinutes: 30 });
    c = await openConsole(h);
    await c.ok('setOperator', { id: 'ann', name: 'Ann' });
  });
  after(async () => {
    await c.close();
    await h.stop();
    await rx.close();
  });

  const alertsSince = (seen: number): Alert[] => c.events.slice(seen).filter((e): e is Alert => e.type === 'alert');
  const say = async (from: string, content: string, extra: Record<string, unknown> = {}) => {
    const r = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: from, from_user_type: 2, content, ...extra });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body as { conversation_id: string; reply: { scheduled: boolean; reason: string } };
  };
  const staffSays = (to: string, content: string) => h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'agent-7', from_user_type: 3, to_user_id: to, content });
  const stopFromIm = (customer: string) => h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: customer, content: 'stop_auto_reply' });
  const summary = async (id: string) => (await c.ok('getConversations', { ids: [id] }))[0]!;
  /** Moves the clock and lets the writer's answer to a fired check come back. */
  const advance = async (ms: number) => {
    h.clock.advance(ms);
    await h.quiesce();
  };

  it('after a stop_auto_reply from the IM: no alert at once, one after 10 minutes unanswered, waiting since the message', async () => {
    const seen = c.events.length;
    await stopFromIm('cust-a');
    const m = await say('cust-a', 'is anyone there?', { nickname: 'Alma' });
    assert.deepEqual(m.reply, { scheduled: false, reason: 'auto_reply_stopped' }, 'section 6, unchanged');
    const wroteAt = h.clock.now();
    await advance(9 * MIN);
    assert.equal((await summary(m.conversation_id)).needsHuman, false, 'staff have 10 minutes to answer in the IM');
    assert.equal(alertsSince(seen).length, 0);
    await advance(1 * MIN);
    await eventually(() => alertsSince(seen).length === 1, 'the alert');
    const [alert] = alertsSince(seen);
    assert.deepEqual([alert!.conversationId, alert!.reason], [m.conversation_id, 'staff_silent']);
    assert.equal(alert!.text, 'Alma (cust-a) is still waiting for the staff who took the conversation over in the IM: “is anyone there?”');
    const s = await summary(m.conversation_id);
    assert.deepEqual([s.needsHuman, s.needsHumanReason, s.needsHumanSince], [true, 'customer_waiting', wroteAt], 'in Needs you, waiting since the message');
    // Still unanswered, later lines add no second alert; a staff line in the IM takes it out.
    await say('cust-a', 'hello???');
    await advance(11 * MIN);
    assert.equal(alertsSince(seen).length, 1);
    await staffSays('cust-a', 'sorry, here now');
    assert.equal((await summary(m.conversation_id)).needsHuman, false);
  });

  it('staff who answer in the IM in time raise nothing; the wait starts again at the next unanswered line', async () => {
    const seen = c.events.length;
    await stopFromIm('cust-b');
    const m = await say('cust-b', 'first question');
    await advance(5 * MIN);
    await staffSays('cust-b', 'looking into it');
    await advance(2 * MIN);
    await say('cust-b', 'any news?');
    const secondAt = h.clock.now();
    await advance(9 * MIN); // 16 minutes after the first line, 9 after the second
    assert.equal(alertsSince(seen).length, 0, 'the answered line does not count');
    await advance(1 * MIN);
    await eventually(() => alertsSince(seen).length === 1, 'the alert for the second line');
    assert.equal((await summary(m.conversation_id)).needsHumanSince, secondAt);
  });

  it('a staff line that pauses the bot counts as a takeover too; an operator reply from the console is an answer', async () => {
    const seen = c.events.length;
    const m = await say('cust-c', 'hello');
    h.clock.advance(2000);
    await eventually(() => rx.received.some((r) => r.body.message_info['to_user_id'] === 'cust-c'), 'the bot answered');
    await staffSays('cust-c', 'I will take this one');
    const during = await say('cust-c', 'thanks, my order is late');
    assert.deepEqual(during.reply, { scheduled: false, reason: 'auto_reply_paused' });
    await advance(4 * MIN);
    await c.ok('sendReply', { conversationId: m.conversation_id, content: 'It ships today.' });
    await advance(20 * MIN);
    assert.equal(alertsSince(seen).length, 0, 'answered from the console');
    await say('cust-c', 'great, and the invoice?');
    await advance(10 * MIN);
    await eventually(() => alertsSince(seen).length === 1, 'the alert for the unanswered line');
  });

  it('staff who stop the bot from the IM right after a customer line (its reply cancelled) take that line on too', async () => {
    const seen = c.events.length;
    const m = await say('cust-f', 'where is my parcel?');
    const wroteAt = h.clock.now();
    await advance(1000); // inside the quiet period: the reply is not made yet
    const stop = await stopFromIm('cust-f');
    assert.equal(stop.status, 200);
    await advance(10 * MIN);
    await eventually(() => alertsSince(seen).length === 1, 'the alert');
    assert.equal((await summary(m.conversation_id)).needsHumanSince, wroteAt);
  });

  it('a reply the receiver had not taken yet when staff stopped the bot from the IM never reached the customer: that line waits on them', async () => {
    const seen = c.events.length;
    rx.respond = (r) => ({ status: r.body.message_info['to_user_id'] === 'cust-g' ? 503 : 200 });
    try {
      const m = await say('cust-g', 'can I change the address?');
      const wroteAt = h.clock.now();
      await advance(2000);
      await eventually(() => rx.received.some((r) => r.body.message_info['to_user_id'] === 'cust-g'), 'the first try, refused');
      const stop = await stopFromIm('cust-g');
      assert.equal(stop.body['cancelled_replies'], 1, 'the retrying delivery is cancelled');
      await advance(10 * MIN);
      await eventually(() => alertsSince(seen).length === 1, 'the alert');
      assert.equal((await summary(m.conversation_id)).needsHumanSince, wroteAt);
    } finally {
      rx.respond = () => ({ status: 200 });
    }
  });

  it('a Resolve counts as handled: nothing is raised for the lines before it', async () => {
    const seen = c.events.length;
    await stopFromIm('cust-d');
    const m = await say('cust-d', 'never mind, found it');
    await advance(2 * MIN);
    await c.ok('resolveConversation', { conversationId: m.conversation_id });
    await advance(30 * MIN);
    assert.equal(alertsSince(seen).length, 0);
    assert.equal((await summary(m.conversation_id)).needsHuman, false);
  });

  it('a conversation the console stopped still alerts at once, as before', async () => {
    const seen = c.events.length;
    const m = await say('cust-e', 'hi');
    await c.ok('stopAutoReply', { conversationId: m.conversation_id });
    await say('cust-e', 'hello?');
    await eventually(() => alertsSince(seen).length === 1, 'the alert at once');
    await advance(30 * MIN);
    assert.equal(alertsSince(seen).length, 1, 'and only that one');
  });
});

describe('the staff wait across a restart, and switched off', () => {
  it('a wait that began before a restart ends on time after it', async () => {
    const rx = await startReceiver();
    const h = await startHarness({ config: { staffWaitMinutes: 5 } });
    try {
      h.addClient('acme', { sendUrl: rx.url });
      await h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: 'cust-r', content: 'stop_auto_reply' });
      const r = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-r', from_user_type: 2, content: 'hello' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const id = String(r.body['conversation_id']);
      h.clock.advance(2 * MIN);
      await h.restart(1 * MIN);
      h.clock.advance(1 * MIN);
      await h.quiesce();
      assert.equal(h.admin.conversations.byId(id)!.needsHuman, false, '4 minutes in');
      h.clock.advance(1 * MIN);
      await eventually(() => h.admin.conversations.byId(id)!.needsHuman, 'flagged 5 minutes after the message');
      // Down past the due time: flagged right after the next start.
      await h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: 'cust-s', content: 'stop_auto_reply' });
      const s = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-s', from_user_type: 2, content: 'hello' });
      await h.restart(10 * MIN);
      await eventually(() => h.admin.conversations.byId(String(s.body['conversation_id']))!.needsHuman, 'flagged at start');
    } finally {
      await h.stop();
      await rx.close();
    }
  });

  it('the first start after the upgrade raises no line from before it: a customer who had the last word in a chat staff handled is history', async () => {
    const rx = await startReceiver();
    const h = await startHarness();
    try {
      h.addClient('acme', { sendUrl: rx.url });
      await h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: 'cust-u', content: 'stop_auto_reply' });
      await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'agent-7', from_user_type: 3, to_user_id: 'cust-u', content: 'done, anything else?' });
      const r = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-u', from_user_type: 2, content: 'no, thanks, bye!' });
      const id = String(r.body['conversation_id']);
      // As if this store had run a version without the watch until now.
      h.admin.settings.put('staff_wait_since', String(h.clock.now() + 1));
      await h.restart(1000);
      h.clock.advance(30 * MIN);
      await h.quiesce();
      assert.equal(h.admin.conversations.byId(id)!.needsHuman, false);
    } finally {
      await h.stop();
      await rx.close();
    }
  });

  it('staffWaitMinutes 0 never raises it', async () => {
    const rx = await startReceiver();
    const h = await startHarness({ config: { staffWaitMinutes: 0 } });
    try {
      h.addClient('acme', { sendUrl: rx.url });
      await h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: 'cust-z', content: 'stop_auto_reply' });
      const r = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-z', from_user_type: 2, content: 'hello' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      h.clock.advance(120 * MIN);
      await h.quiesce();
      assert.equal(h.admin.conversations.byId(String(r.body['conversation_id']))!.needsHuman, false);
    } finally {
      await h.stop();
      await rx.close();
    }
  });
});
