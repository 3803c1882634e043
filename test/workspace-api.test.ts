import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { startReceiver, eventually, type Receiver } from './helpers/receiver.ts';
import { scriptedEngine } from './helpers/engines.ts';
import { openConsole, type ConsoleClient } from './helpers/console.ts';
import { driveClock } from './helpers/drive-clock.ts';
import type { ConsoleEvent } from '../src/shared/console-api.ts';

const SECRET = 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz';
const ANN = { id: 'ann', name: 'Ann' };

describe('the agent\'s workspace over the console API', () => {
  let h: Harness;
  let rx: Receiver;
  let c: ConsoleClient;
  const scripted = scriptedEngine();

  before(async () => {
    rx = await startReceiver();
    // "HANDOFF" in the customer's last line makes the engine hand off; anything else is answered.
    scripted.answer((r) => {
      const last = r.context.filter((l) => l.role === 'customer').at(-1)?.content ?? '';
      return last.includes('HANDOFF') ? { content: '', handoff: true, confidence: 0, sources: [] } : { content: `answer to: ${last}`, handoff: false, confidence: 1, sources: [] };
    });
    h = await startHarness({ engine: scripted.engine, config: { engineTimeoutMs: 5000 } });
    h.addClient('acme', { sendUrl: rx.url, boundAccount: 'shop-bot' }, SECRET);
    c = await openConsole(h);
  });
  after(async () => {
    await c.close();
    await h.stop();
    await rx.close();
  });

  async function say(from: string, content: string, extra: Record<string, unknown> = {}): Promise<{ msgId: string; conversationId: string }> {
    const r = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: from, from_user_type: 2, content, ...extra });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return { msgId: String(r.body['msg_id']), conversationId: String(r.body['conversation_id']) };
  }
  const summary = async (id: string) => (await c.ok('getConversations', { ids: [id] }))[0]!;
  /** A customer message the engine hands off on, once its quiet period has passed. */
  async function handoff(from: string, content = 'HANDOFF please', extra: Record<string, unknown> = {}) {
    const m = await say(from, content, extra);
    h.clock.advance(2000);
    await eventually(async () => (await summary(m.conversationId)).needsHuman, 'needs_human');
    return m;
  }

  it('write actions need the operator identity first; it is a zod-checked setting', async () => {
    const m = await say('early-bird', 'hello');
    assert.equal(await c.ok('getOperator'), null);
    for (const [method, input] of [
      ['sendReply', { conversationId: m.conversationId, content: 'hi' }],
      ['resolveConversation', { conversationId: m.conversationId }],
      ['stopAutoReply', { conversationId: m.conversationId }],
      ['resumeAutoReply', { conversationId: m.conversationId }],
      ['assist', { conversationId: m.conversationId }],
    ] as const) {
      const r = await c.call(method, input);
      assert.equal(!r.ok && r.error.code, 'operator_required', method);
      assert.match(!r.ok ? r.error.message : '', /^Set who you are first \(an operator id and display name\)/);
    }
    const blank = await c.call('setOperator', { id: 'x', name: '   ' });
    assert.equal(!blank.ok && blank.error.code, 'invalid_input');
    h.admin.settings.put('operator', JSON.stringify({ id: '', name: 'hand-edited' }));
    assert.equal(await c.ok('getOperator'), null, 'a bad stored value counts as not set');
    assert.deepEqual(await c.ok('setOperator', { id: 'temp', name: 'Temp' }), { id: 'temp', name: 'Temp' });
    assert.deepEqual(await c.ok('setOperator', ANN), ANN);
    assert.deepEqual(await c.ok('getOperator'), ANN);
    const changes = (await c.ok('listAudit', {})).filter((a) => a.action === 'operator');
    assert.deepEqual(changes.map((a) => [a.operator.name, a.detail]), [['Ann', '{"previous":"Temp (temp)"}'], ['Temp', null]]);
  });

  it('customer names, unread counts and the read marker', async () => {
    const a = await say('cust-u', 'one', { nickname: 'Ursula' });
    await say('cust-u', 'two');
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'agent-x', from_user_type: 3, to_user_id: 'cust-u', content: 'staff line', nickname: 'Agent X' });
    const third = await say('cust-u', 'three', { nick_name: 'Ursula K.' });
    let s = await summary(a.conversationId);
    assert.deepEqual([s.unread, s.customerName], [3, 'Ursula K.'], 'staff lines are not unread; the latest nickname wins');
    const t = await c.ok('getTranscript', { conversationId: a.conversationId });
    const messages = t.entries.filter((e) => e.kind === 'message');
    // Names are kept per person (protocol v1.2: the latest sent wins), so her earlier lines, and the one sent without a name, read as her latest.
    assert.deepEqual(messages.map((e) => e.speakerName), ['Ursula K.', 'Ursula K.', 'Agent X', 'Ursula K.']);
    assert.deepEqual(await c.ok('markRead', { conversationId: a.conversationId, upToId: messages[1]!.id }), { unread: 1 });
    assert.deepEqual(await c.ok('markRead', { conversationId: a.conversationId, upToId: messages[0]!.id }), { unread: 1 }, 'the marker never goes back');
    assert.deepEqual(await c.ok('markRead', { conversationId: a.conversationId, upToId: messages[3]!.id }), { unread: 0 });
    await say('cust-u', 'four', { from_user_name: 'u.k' });
    s = await summary(a.conversationId);
    assert.deepEqual([s.unread, s.customerName], [1, 'u.k']);
    // The staff line in the IM paused the bot: the customer's lines since are that staff's to answer there.
    assert.equal(s.needsHuman, false);
    void third;
    const missing = await c.call('markRead', { conversationId: 'c_nope', upToId: 1 });
    assert.equal(!missing.ok && missing.error.code, 'not_found');
  });

  it('a new needs-human raises one alert, which resolve and staff in the IM clear', async () => {
    const seen = c.events.length;
    const m = await handoff('cust-h', 'HANDOFF: I want a refund for order 1234, it arrived broken and nobody answers my mails', { nickname: 'Hana' });
    const alerts = (): Array<Extract<ConsoleEvent, { type: 'alert' }>> => c.events.slice(seen).filter((e): e is Extract<ConsoleEvent, { type: 'alert' }> => e.type === 'alert');
    await eventually(() => alerts().length === 1, 'the alert');
    const alert = alerts()[0]!;
    assert.equal(alert.conversationId, m.conversationId);
    assert.equal(alert.reason, 'handoff');
    assert.match(alert.text, /^The bot handed Hana \(cust-h\) over to you: “HANDOFF: I want a refund for order 1234/);
    assert.ok(alert.text.length < 180, 'short, the message truncated');
    const since = (await summary(m.conversationId)).needsHumanSince;
    assert.equal(since, h.clock.now());
    await say('cust-h', 'HANDOFF hello??');
    h.clock.advance(2000);
    await eventually(async () => (await c.ok('getTranscript', { conversationId: m.conversationId })).entries.filter((e) => e.handoff).length === 2, 'a second handoff');
    await h.quiesce();
    assert.equal(alerts().length, 1, 'still flagged: no second alert');
    assert.equal((await summary(m.conversationId)).needsHumanSince, since);

    await c.ok('setOperator', ANN);
    const resolved = await c.ok('resolveConversation', { conversationId: m.conversationId });
    assert.deepEqual(resolved, { resolvedAt: h.clock.now(), resolvedBy: ANN, undoable: true });
    const s = await summary(m.conversationId);
    assert.deepEqual([s.needsHuman, s.needsHumanSince, s.resolvedAt, s.resolvedBy], [false, null, h.clock.now(), 'Ann']);

    // Flagged again, then staff speak in the IM: type 3, or type 1 from the bound account.
    await say('cust-h', 'HANDOFF again');
    h.clock.advance(2000);
    await eventually(() => alerts().length === 2, 'a new alert after the resolve');
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'agent-7', from_user_type: 3, to_user_id: 'cust-h', content: 'I am on it' });
    assert.equal((await summary(m.conversationId)).needsHuman, false, 'cleared by a staff message (type 3)');
    const n = await handoff('cust-j');
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'shop-bot', from_user_type: 1, to_user_id: 'cust-j', content: 'Hi, here to help' });
    assert.equal((await summary(n.conversationId)).needsHuman, false, 'cleared by the bound account speaking');
    // A website handoff alerts too.
    const w = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'visitor-h', content: 'HANDOFF on the web' });
    await eventually(() => alerts().some((e) => e.conversationId === w.body['conversation_id'] && e.reason === 'handoff'), 'the web alert');
    await c.ok('resolveConversation', { conversationId: String(w.body['conversation_id']) });
  });

  it('"needs you" lists flagged conversations, longest wait first; search finds ids, nicknames and groups', async () => {
    const first = await handoff('wait-1', 'HANDOFF first');
    h.clock.advance(60_000);
    const second = await handoff('wait-2', 'HANDOFF second', { nickname: 'Zed Zebra' });
    h.clock.advance(60_000);
    const third = await handoff('wait-3', 'HANDOFF third', { group_id: 'grp-unicorn', at_list: ['shop-bot'] });
    await say('wait-4', 'fine, thanks');
    const needsYou = (await c.ok('listConversations', { view: 'needs_you' })).items;
    assert.deepEqual(needsYou.map((s) => s.id), [first.conversationId, second.conversationId, third.conversationId]);
    const all = (await c.ok('listConversations', { view: 'all' })).items;
    assert.ok(all.length > needsYou.length);
    const ids = async (search: string) => (await c.ok('listConversations', { search })).items.map((s) => s.id);
    assert.deepEqual(await ids('zebra'), [second.conversationId], 'nickname');
    assert.deepEqual(await ids('WAIT-1'), [first.conversationId], 'customer id');
    assert.deepEqual(await ids('wait_1'), [], '_ and % are literal, not wildcards');
    assert.deepEqual(await ids('unicorn'), [third.conversationId], 'group id');
    assert.deepEqual(await ids('fine, thanks'), [(await say('wait-4', 'again')).conversationId], 'message text still');
    for (const conv of needsYou) await c.ok('resolveConversation', { conversationId: conv.id });
    assert.deepEqual(await c.ok('listConversations', { view: 'needs_you' }), { items: [], nextCursor: null });
  });

  it('a customer writing while a human has the conversation enters Needs you with one alert; the response is as before', async () => {
    const seen = c.events.length;
    const alerts = (): Array<Extract<ConsoleEvent, { type: 'alert' }>> => c.events.slice(seen).filter((e): e is Extract<ConsoleEvent, { type: 'alert' }> => e.type === 'alert');
    const inNeedsYou = async (id: string) => (await c.ok('listConversations', { view: 'needs_you' })).items.some((s) => s.id === id);
    const m = await say('cust-w', 'hello', { nickname: 'Wanda' });
    h.clock.advance(2000);
    await eventually(() => rx.received.some((r) => r.body.message_info['to_user_id'] === 'cust-w'), 'the bot answered');
    // The agent stops auto-reply (s in the console) and moves on; the customer writes again.
    await c.ok('stopAutoReply', { conversationId: m.conversationId });
    const r = await h.post({ event_type: 'auto_dialog', msg_id: 'wait-1', from_user_id: 'cust-w', from_user_type: 2, content: 'are you there?' });
    assert.deepEqual(r.body, { request_id: r.body['request_id'], event_type: 'auto_dialog', conversation_id: m.conversationId, msg_id: 'wait-1', auto_reply: 'stopped', reply: { scheduled: false, reason: 'auto_reply_stopped' } }, 'section 6, unchanged');
    await eventually(() => alerts().length === 1, 'the alert');
    const alert = alerts()[0]!;
    assert.deepEqual([alert.conversationId, alert.reason], [m.conversationId, 'customer_waiting']);
    assert.equal(alert.text, 'Wanda (cust-w) wrote while a human has the conversation: “are you there?”');
    assert.ok(await inNeedsYou(m.conversationId));
    assert.equal((await summary(m.conversationId)).needsHumanSince, h.clock.now());
    assert.equal((await summary(m.conversationId)).needsHumanReason, 'customer_waiting', 'the queue says why');
    await say('cust-w', 'hello??');
    await h.quiesce();
    assert.equal(alerts().length, 1, 'already in Needs you: no second alert');

    // An operator reply takes the customer out of Needs you and pauses auto-reply for 10 minutes...
    await c.ok('resumeAutoReply', { conversationId: m.conversationId });
    await c.ok('sendReply', { conversationId: m.conversationId, content: 'Yes, Wanda, I am here.' });
    assert.equal(await inNeedsYou(m.conversationId), false);
    // ...and the customer's answer within it is the console's to see...
    h.clock.advance(60_000);
    const paused = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-w', from_user_type: 2, content: 'one more thing' });
    assert.deepEqual(paused.body['reply'], { scheduled: false, reason: 'auto_reply_paused' });
    await eventually(() => alerts().length === 2, 'a new alert');
    assert.equal(alerts()[1]!.reason, 'customer_waiting');
    assert.ok(await inNeedsYou(m.conversationId));
    // ...until staff take it over in the IM: a staff line clears the flag, and the customer's next
    // line is theirs (they see it in the IM), not a console alert at every line of their chat.
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'agent-7', from_user_type: 3, to_user_id: 'cust-w', content: 'noted' });
    assert.equal(await inNeedsYou(m.conversationId), false);
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-w', from_user_type: 2, content: 'thanks' });
    await h.quiesce();
    assert.equal(alerts().length, 2, 'no alert for a chat held in the IM');
    assert.equal(await inNeedsYou(m.conversationId), false);
  });

  it('a customer who writes between a stop and its Undo is answered after all, and leaves Needs you', async () => {
    const inNeedsYou = async (id: string) => (await c.ok('listConversations', { view: 'needs_you' })).items.some((s) => s.id === id);
    const m = await say('cust-z', 'hello', { nickname: 'Zed' });
    h.clock.advance(2000);
    await eventually(() => rx.received.some((r) => r.body.message_info['to_user_id'] === 'cust-z'), 'the bot answered');
    await c.ok('stopAutoReply', { conversationId: m.conversationId });
    h.clock.advance(1000);
    const during = await h.post({ event_type: 'auto_dialog', msg_id: 'undo-mid', from_user_id: 'cust-z', from_user_type: 2, content: 'still there?' });
    assert.deepEqual(during.body['reply'], { scheduled: false, reason: 'auto_reply_stopped' }, 'the response says what held then');
    assert.ok(await inNeedsYou(m.conversationId), 'left for a human while stopped');
    h.clock.advance(1000);
    await c.ok('resumeAutoReply', { conversationId: m.conversationId, undoStop: true });
    assert.equal(await inNeedsYou(m.conversationId), false, 'the Undo takes back the entry its stop made');
    h.clock.advance(1000);
    await eventually(() => rx.received.some((r) => ((r.body.message_info['reply_to'] as string[] | undefined) ?? []).includes('undo-mid')), 'answered after all, 2 s after it arrived');
    const line = (await c.ok('getTranscript', { conversationId: m.conversationId })).entries.find((e) => e.msgId === 'undo-mid')!;
    assert.deepEqual([line.decision?.reason, line.decision?.outcome], ['scheduled', 'answered'], 'its why-line says it was answered');
  });

  it('a suggestion works on the latest customer message with the instruction, and writes no customer message', async () => {
    const m = await say('cust-s', 'first question');
    await say('cust-s', 'what about the warranty?');
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'agent', from_user_type: 3, to_user_id: 'cust-s', content: 'staff note' });
    const before = await c.ok('getTranscript', { conversationId: m.conversationId });
    const calls = scripted.calls.length;
    const r = await c.ok('assist', { conversationId: m.conversationId, instruction: 'mention the 2-year warranty' });
    assert.equal(r.suggestion.content, 'answer to: what about the warranty?');
    assert.equal(scripted.calls[calls]!.instruction, 'mention the 2-year warranty', 'the engine is told');
    assert.equal(scripted.calls[calls]!.purpose, 'suggestion');
    const afterT = await c.ok('getTranscript', { conversationId: m.conversationId });
    assert.equal(afterT.entries.filter((e) => e.kind === 'message').length, before.entries.filter((e) => e.kind === 'message').length, 'no message appended');
    assert.equal(afterT.conversation.messageCount, before.conversation.messageCount);
    const suggestion = afterT.entries.find((e) => e.kind === 'suggestion')!;
    assert.deepEqual([suggestion.msgId, suggestion.instruction], [r.suggestion.msgId, 'mention the 2-year warranty']);
    const audit = (await c.ok('listAudit', { conversationId: m.conversationId }))[0]!;
    assert.deepEqual([audit.action, audit.operator, JSON.parse(audit.detail!).instruction], ['assist', ANN, 'mention the 2-year warranty']);
  });

  it('a suggestion in a web conversation creates no im conversation', async () => {
    const w = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'web-only', content: 'do you deliver on Sundays?' });
    const conversationId = String(w.body['conversation_id']);
    const count = (await c.ok('listConversations', { limit: 200 })).items.length;
    const r = await c.ok('assist', { conversationId });
    assert.equal(r.suggestion.content, 'answer to: do you deliver on Sundays?');
    assert.equal((await c.ok('listConversations', { limit: 200 })).items.length, count);
    assert.equal(h.admin.conversations.byKey('acme', 'im', 'u:web-only'), undefined);
    const t = await c.ok('getTranscript', { conversationId });
    assert.deepEqual(t.entries.map((e) => e.kind), ['message', 'reply', 'suggestion']);
  });

  it('a suggestion the engine does not give in time is engine_timeout', async () => {
    const m = await say('slow-s', 'hello?');
    scripted.hold();
    const { result } = await driveClock(h.clock, c.call('assist', { conversationId: m.conversationId }), { stepMs: 1000 });
    scripted.release();
    assert.equal(result.status, 'fulfilled');
    const value = (result as PromiseFulfilledResult<Awaited<ReturnType<ConsoleClient['call']>>>).value;
    assert.equal(!value.ok && value.error.code, 'engine_timeout');
    assert.equal((await c.ok('getTranscript', { conversationId: m.conversationId })).entries.filter((e) => e.kind === 'suggestion').length, 0);
  });

  it('knowledge-base sources carry their question', async () => {
    const kbId = h.admin.kb.add('Do you ship to Norway?', 'Yes, within 5 days.', 0);
    scripted.answer(() => ({ content: 'Yes, within 5 days.', handoff: false, confidence: 0.9, sources: [{ id: kbId, score: 0.9 }, { id: 99_999, score: 0.1 }] }));
    const w = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'kb-v', content: 'Norway shipping?' });
    const t = await c.ok('getTranscript', { conversationId: String(w.body['conversation_id']) });
    assert.deepEqual(t.entries.find((e) => e.kind === 'reply')!.sources, [{ id: kbId, score: 0.9, question: 'Do you ship to Norway?' }, { id: 99_999, score: 0.1 }]);
    scripted.answer((r) => ({ content: `answer to: ${r.context.filter((l) => l.role === 'customer').at(-1)?.content ?? ''}`, handoff: false, confidence: 1, sources: [] }));
  });

  it('canned replies: save, search title and content, edit, remove', async () => {
    const hi = await c.ok('saveCanned', { title: 'Greeting', content: 'Hello! How can I help?' });
    const ship = await c.ok('saveCanned', { title: 'Shipping times', content: 'Parcels arrive within 3 days.' });
    assert.deepEqual((await c.ok('listCanned', {})).map((x) => x.title), ['Greeting', 'Shipping times']);
    assert.deepEqual((await c.ok('listCanned', { search: 'PARCELS' })).map((x) => x.id), [ship.id], 'content');
    assert.deepEqual((await c.ok('listCanned', { search: 'greet' })).map((x) => x.id), [hi.id], 'title');
    const edited = await c.ok('saveCanned', { id: hi.id, title: 'Greeting', content: 'Hi there!' });
    assert.equal(edited.content, 'Hi there!');
    assert.deepEqual(await c.ok('removeCanned', { id: ship.id }), { removed: true });
    assert.deepEqual((await c.ok('listCanned', {})).map((x) => x.id), [hi.id]);
    const missing = await c.call('saveCanned', { id: 9999, title: 'x', content: 'y' });
    assert.equal(!missing.ok && missing.error.code, 'not_found');
    const empty = await c.call('saveCanned', { title: ' ', content: 'y' });
    assert.equal(!empty.ok && empty.error.code, 'invalid_input');
  });

  it('deliveries that need attention, across conversations and by client; retry one or all', async (t) => {
    const bad = await startReceiver('/bad');
    t.after(() => bad.close());
    bad.respond = (r) => (String(r.body.message_info['content']).includes('dead') ? { status: 410 } : { status: 503 });
    h.addClient('flaky', { sendUrl: bad.url }, SECRET);
    const post = (from: string, content: string) => h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: from, from_user_type: 2, content }, { client: 'flaky' });
    await post('d-1', 'dead one');
    await post('d-2', 'dead two');
    await post('d-3', 'retry me');
    h.clock.advance(2000);
    await eventually(() => bad.received.length === 3, 'three first tries');
    const listed = await eventually(async () => {
      const l = await c.ok('listDeliveries', { clientId: 'flaky' });
      return l.length === 3 && l;
    }, 'listed');
    assert.deepEqual(listed.map((d) => d.state).sort(), ['dead', 'dead', 'retrying']);
    const retrying = listed.find((d) => d.state === 'retrying')!;
    assert.deepEqual([retrying.lastStatus, retrying.attempts, retrying.nextAttemptAt, retrying.kind], [503, 1, h.clock.now() + 5000, 'auto']);
    assert.deepEqual((await c.ok('listDeliveries', { clientId: 'flaky', states: ['dead'] })).length, 2);
    assert.deepEqual(await c.ok('listDeliveries', { clientId: 'acme-none' }), []);
    bad.respond = () => ({ status: 200 });
    assert.equal((await c.ok('retryDeliveries', { clientId: 'flaky' })).retried, 2, 'every dead one of the client');
    await eventually(() => bad.received.length === 5, 'both dead ones sent');
    assert.equal((await c.ok('retryDeliveries', { ids: [retrying.id] })).retried, 1, 'a retrying one goes now');
    await eventually(() => bad.received.length === 6, 'the retrying one sent without waiting');
    await eventually(async () => (await c.ok('listDeliveries', { clientId: 'flaky' })).length === 0, 'nothing left to attend to');
    const retries = (await c.ok('listAudit', {})).filter((a) => a.action === 'retry');
    assert.equal(retries.length, 2);
  });

  it('the audit records replies, resolves, stop, resume, assist, retry and client changes', async () => {
    const m = await say('audited', 'hello');
    await c.ok('stopAutoReply', { conversationId: m.conversationId });
    await c.ok('resumeAutoReply', { conversationId: m.conversationId });
    await c.ok('sendReply', { conversationId: m.conversationId, content: 'A reply that is recorded' });
    await c.ok('resolveConversation', { conversationId: m.conversationId });
    await c.ok('updateClientSettings', { id: 'acme', settings: { pauseMinutes: 15 } });
    const mine = await c.ok('listAudit', { conversationId: m.conversationId });
    assert.deepEqual(mine.map((a) => a.action), ['resolve', 'reply', 'resume', 'stop']);
    assert.ok(mine.every((a) => a.operator.id === 'ann' && a.conversationId === m.conversationId));
    assert.match(mine[1]!.detail!, /A reply that is recorded/);
    const latest = (await c.ok('listAudit', { limit: 1 }))[0]!;
    assert.deepEqual([latest.action, latest.conversationId, JSON.parse(latest.detail!)], ['client_settings', null, { client: 'acme', change: 'settings', settings: { pauseMinutes: 15 } }]);
    assert.ok(latest.at > 0);
  });

  it('the request log filters by request_id, msg_id, client and time, links the conversation, keeps field errors', async () => {
    const m = await say('logged', 'hello log');
    const bad = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'logged', content: 'no type' });
    assert.equal(bad.status, 400);
    const requestId = String(bad.body['request_id']);
    const byRequest = await eventually(async () => {
      const l = await c.ok('listRequests', { requestId });
      return l.length === 1 && l;
    }, 'the refused request');
    assert.equal(byRequest[0]!.code, 'validation_failed');
    assert.ok(Array.isArray(byRequest[0]!.problem?.['errors']), 'field errors are kept in the problem');
    const byMsg = await c.ok('listRequests', { msgId: m.msgId });
    assert.deepEqual(byMsg.map((r) => [r.msgId, r.conversationId, r.status]), [[m.msgId, m.conversationId, 200]]);
    h.addClient('quiet', {}, SECRET);
    await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'q', content: 'hi' }, { client: 'quiet' });
    const byClient = await eventually(async () => {
      const l = await c.ok('listRequests', { clientId: 'quiet' });
      return l.length === 1 && l;
    }, 'the quiet client\'s request');
    assert.equal(byClient[0]!.eventType, 'website_dialog');
    const now = h.clock.now();
    assert.deepEqual(await c.ok('listRequests', { since: now + 1 }), []);
    assert.ok((await c.ok('listRequests', { since: now - 1000, until: now })).length >= 1);
    assert.deepEqual(await c.ok('listRequests', { until: 0 }), []);
  });

  it('sends a real signed test message to the running endpoint and shows the answer', async () => {
    const r = await c.ok('sendTestMessage', { clientId: 'acme', content: 'Is this thing on?' });
    assert.equal(r.status, 200);
    const body = r.body as { request_id: string; event_type: string; reply: { content: string } };
    assert.equal(body.event_type, 'website_dialog');
    assert.equal(body.reply.content, 'answer to: Is this thing on?');
    assert.equal(r.requestId, body.request_id);
    assert.ok(r.latencyMs >= 0);
    assert.ok(!JSON.stringify(r).includes(SECRET), 'the secret never comes back');
    const logged = await eventually(async () => {
      const l = await c.ok('listRequests', { requestId: r.requestId! });
      return l.length === 1 && l;
    }, 'in the request log');
    assert.equal(logged[0]!.status, 200);
    // A test the engine hands off leaves no work behind: no alert, nothing in "needs you".
    scripted.answer(() => ({ content: '', handoff: true, confidence: 0, sources: [] }));
    const seen = c.events.length;
    const handedOff = await c.ok('sendTestMessage', { clientId: 'acme', content: 'a question nobody can answer' });
    assert.equal((handedOff.body as { reply: { handoff: boolean } }).reply.handoff, true);
    assert.equal(handedOff.answer?.handoff, true);
    const conversationId = (handedOff.body as { conversation_id: string }).conversation_id;
    const queue = await c.ok('listConversations', { view: 'needs_you' });
    assert.equal(queue.items.some((i) => i.id === conversationId), false, 'not in needs you');
    assert.equal(c.events.slice(seen).some((e) => e.type === 'alert'), false, 'no alert');
    const audit = await c.ok('listAudit', { conversationId });
    assert.equal(audit.find((a) => a.action === 'resolve')?.operator.name, 'Console test message');
    const unknown = await c.call('sendTestMessage', { clientId: 'nobody' });
    assert.equal(!unknown.ok && unknown.error.code, 'not_found');
    await c.ok('setClientEnabled', { id: 'quiet', enabled: false });
    const disabled = await c.call('sendTestMessage', { clientId: 'quiet' });
    assert.equal(!disabled.ok && disabled.error.code, 'client_disabled');
  });
});
