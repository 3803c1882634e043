import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import type { Engine } from '../src/main/engines/engine.ts';

const customer = (extra: Record<string, unknown> = {}) => ({
  event_type: 'auto_dialog',
  msg_id: mid(),
  from_user_id: 'cust-1',
  from_user_type: 2,
  content: 'How do I reset my password?',
  ...extra,
});
const reply = (r: { body: Record<string, unknown> }) => r.body['reply'] as { scheduled: boolean; reason: string };

describe('section 6: auto_dialog decisions', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    h.addClient('acme', { sendUrl: 'http://127.0.0.1:9/hook', boundAccount: 'bot-acme', botIds: ['bot-alias'] });
    h.addClient('all', { sendUrl: 'http://127.0.0.1:9/hook', groupPolicy: 'all' });
    h.addClient('never', { sendUrl: 'http://127.0.0.1:9/hook', groupPolicy: 'never', pauseMinutes: 0 });
  });
  after(() => h.stop());

  it('a customer message is stored durably and scheduled, with the conversation and state', async () => {
    const msgId = mid();
    const r = await h.post(customer({ msg_id: msgId, from_user_id: 'alice' }));
    assert.equal(r.status, 200);
    assert.equal(r.body['event_type'], 'auto_dialog');
    assert.equal(r.body['msg_id'], msgId);
    assert.match(String(r.body['conversation_id']), /^c_/);
    assert.equal(r.body['auto_reply'], 'active');
    assert.deepEqual(reply(r), { scheduled: true, reason: 'scheduled' });
    assert.ok(h.admin.messages.findAutoMessage('acme', msgId), 'committed before the response');
  });

  it('type 1 from someone else is a customer; type 3, type 4 and the bound account are not', async () => {
    assert.equal(reply(await h.post(customer({ from_user_id: 'emp-9', from_user_type: 1 }))).reason, 'scheduled');
    for (const sender of [{ from_user_type: 4 }, { from_user_type: 3 }, { from_user_type: 1, from_user_id: 'bot-acme' }]) {
      const r = await h.post(customer({ ...sender, to_user_id: 'cust-x' }));
      assert.deepEqual(reply(r), { scheduled: false, reason: 'sender_not_customer' });
    }
  });

  it('in a group, only a mention of the bound account or a bot id, or a quote of our reply, triggers a reply', async () => {
    const g = { group_id: `grp-${mid()}` };
    assert.equal(reply(await h.post(customer({ ...g }))).reason, 'not_mentioned');
    assert.equal(reply(await h.post(customer({ ...g, at_list: ['someone'] }))).reason, 'not_mentioned');
    assert.equal(reply(await h.post(customer({ ...g, at_list: ['someone', 'bot-acme'] }))).reason, 'scheduled');
    assert.equal(reply(await h.post(customer({ ...g, at_list: ['bot-alias'] }))).reason, 'scheduled');
    h.admin.kb.add('How do I reset my password?', 'Settings > Security.', h.clock.now());
    const ours = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'w', content: 'reset my password' });
    const ourMsgId = (ours.body['reply'] as { msg_id: string }).msg_id;
    const quoting = await h.post(customer({ ...g, message_type: 2, quote: { msg_id: ourMsgId, message_type: 1 } }));
    assert.equal(reply(quoting).reason, 'scheduled');
    const quotingOther = await h.post(customer({ ...g, message_type: 2, quote: { msg_id: 'someone-elses', message_type: 1 } }));
    assert.equal(reply(quotingOther).reason, 'not_mentioned');
  });

  it('group policy all answers every customer message; never answers none', async () => {
    assert.equal(reply(await h.post(customer({ group_id: 'g-all' }), { client: 'all' })).reason, 'scheduled');
    assert.equal(reply(await h.post(customer({ group_id: 'g-never', at_list: ['x'] }), { client: 'never' })).reason, 'not_mentioned');
    assert.equal(reply(await h.post(customer({ from_user_id: 'one-to-one' }), { client: 'never' })).reason, 'scheduled');
  });

  it('a message older than 10 minutes is stored but never answered', async () => {
    const old = await h.post(customer({ create_timestamp: h.now() - 601 }));
    assert.deepEqual(reply(old), { scheduled: false, reason: 'stale_message' });
    assert.equal(reply(await h.post(customer({ create_timestamp: h.now() - 599 }))).reason, 'scheduled');
  });

  it('a staff message pauses the conversation for 10 minutes; then it resumes by itself', async () => {
    const who = { from_user_id: `pause-${mid()}` };
    await h.post(customer(who));
    const staff = await h.post({ ...customer(), from_user_id: 'agent-7', from_user_type: 3, to_user_id: who.from_user_id });
    assert.equal(staff.body['auto_reply'], 'paused');
    const during = await h.post(customer(who));
    assert.equal(during.body['conversation_id'], staff.body['conversation_id'], 'staff reply lands in the customer conversation');
    assert.equal(during.body['auto_reply'], 'paused');
    assert.deepEqual(reply(during), { scheduled: false, reason: 'auto_reply_paused' });
    h.clock.advance(10 * 60_000);
    const after = await h.post(customer(who));
    assert.equal(after.body['auto_reply'], 'active');
    assert.equal(reply(after).reason, 'scheduled');
  });

  it('the bound account speaking (type 1) pauses too; pause minutes 0 turns pausing off', async () => {
    const who = { from_user_id: `bound-${mid()}` };
    const staff = await h.post({ ...customer(), from_user_id: 'bot-acme', from_user_type: 1, to_user_id: who.from_user_id });
    assert.equal(staff.body['auto_reply'], 'paused');
    const off = await h.post({ ...customer(), from_user_type: 3, from_user_id: 'agent', to_user_id: 'z' }, { client: 'never' });
    assert.equal(off.body['auto_reply'], 'active');
  });
});

describe('section 6: cmd_dialog, assist_dialog, website_dialog', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    h.addClient('acme', { sendUrl: 'http://127.0.0.1:9/hook', fallbackText: 'A colleague will reply soon.' });
    h.admin.kb.add('How much does the Pro plan cost?', 'Pro is $12 per user per month.', 0);
    h.admin.kb.add('How much does the Business plan cost?', 'Business is $25 per user per month.', 0);
    h.admin.kb.add('如何重置密码？', '请在“设置 > 安全”中重置密码。', 0);
  });
  after(() => h.stop());

  it('stop_auto_reply stops the im conversation of the same peer, idempotently', async () => {
    const who = `stop-${mid()}`;
    const first = await h.post(customer({ from_user_id: who }));
    const stop = await h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: who, content: 'stop_auto_reply' });
    assert.equal(stop.status, 200);
    assert.equal(stop.body['conversation_id'], first.body['conversation_id']);
    assert.equal(stop.body['command'], 'stop_auto_reply');
    assert.equal(stop.body['auto_reply'], 'stopped');
    assert.equal(stop.body['previous'], 'active');
    assert.equal(stop.body['cancelled_replies'], 0);
    const again = await h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: who, content: 'stop_auto_reply' });
    assert.equal(again.body['previous'], 'stopped');
    const after = await h.post(customer({ from_user_id: who }));
    assert.deepEqual(reply(after), { scheduled: false, reason: 'auto_reply_stopped' });
    h.clock.advance(3600_000);
    assert.equal(reply(await h.post(customer({ from_user_id: who }))).reason, 'auto_reply_stopped', 'only the console resumes');
  });

  it('stop_auto_reply on an unknown peer creates the conversation, stopped', async () => {
    const who = `new-${mid()}`;
    const stop = await h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: who, content: 'stop_auto_reply' });
    assert.equal(stop.body['previous'], 'none');
    const first = await h.post(customer({ from_user_id: who }));
    assert.equal(first.body['conversation_id'], stop.body['conversation_id']);
    assert.equal(first.body['auto_reply'], 'stopped');
  });

  it('stop_auto_reply on a paused conversation reports previous: paused', async () => {
    const who = `p-${mid()}`;
    await h.post({ ...customer(), from_user_type: 3, from_user_id: 'agent', to_user_id: who });
    const stop = await h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: who, content: 'stop_auto_reply' });
    assert.equal(stop.body['previous'], 'paused');
  });

  it('website_dialog answers from the knowledge base at once and appends both to the web conversation', async () => {
    const who = `web-${mid()}`;
    const r = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: who, content: 'How much is the Pro plan?' });
    assert.equal(r.status, 200);
    const rep = r.body['reply'] as { msg_id: string; content: string; handoff: boolean };
    assert.match(rep.msg_id, /^r_/);
    assert.equal(rep.content, 'Pro is $12 per user per month.');
    assert.equal(rep.handoff, false);
    const follow = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: who, content: 'and for Business?' });
    assert.equal(follow.body['conversation_id'], r.body['conversation_id']);
    assert.equal((follow.body['reply'] as { content: string }).content, 'Business is $25 per user per month.');
    const im = await h.post(customer({ from_user_id: who }));
    assert.notEqual(im.body['conversation_id'], r.body['conversation_id'], 'web and im are separate channels');
  });

  it('website_dialog in Chinese, and a handoff with the fallback text when nothing matches', async () => {
    const zh = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'zh', content: '我想重置密码' });
    assert.match((zh.body['reply'] as { content: string }).content, /重置密码/);
    const none = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'q', content: 'Do you sell garden furniture?' });
    assert.deepEqual({ ...(none.body['reply'] as object), msg_id: 'x' }, { msg_id: 'x', content: 'A colleague will reply soon.', handoff: true });
  });

  it('assist_dialog on an auto_dialog msg_id reuses that conversation up to that message, not appending', async () => {
    const who = `assist-${mid()}`;
    const m1 = await h.post(customer({ from_user_id: who, content: 'How much does the Pro plan cost?' }));
    const target = String(m1.body['msg_id']);
    await h.post(customer({ from_user_id: who, content: 'something later' }));
    const r = await h.post({ event_type: 'assist_dialog', msg_id: target, from_user_id: who, content: 'How much does the Pro plan cost?' });
    assert.equal(r.status, 200);
    assert.equal(r.body['conversation_id'], m1.body['conversation_id']);
    assert.deepEqual(r.body['context'], { reused: true, matched_by: 'msg_id', messages: 1 });
    const s = r.body['suggestion'] as { msg_id: string; content: string; handoff: boolean };
    assert.match(s.msg_id, /^s_/);
    assert.equal(s.content, 'Pro is $12 per user per month.');
    const conv = h.admin.conversations.byId(String(m1.body['conversation_id']));
    assert.equal(conv?.messageCount, 2, 'the assist message was not appended');
  });

  it('assist_dialog with a new msg_id reuses the im conversation of the same peer and appends', async () => {
    const who = `peer-${mid()}`;
    const m1 = await h.post(customer({ from_user_id: who, content: 'hello' }));
    const r = await h.post({ event_type: 'assist_dialog', msg_id: mid(), from_user_id: who, content: 'How much does the Business plan cost?' });
    assert.equal(r.body['conversation_id'], m1.body['conversation_id']);
    assert.deepEqual(r.body['context'], { reused: true, matched_by: 'peer', messages: 2 });
    assert.equal(h.admin.conversations.byId(String(m1.body['conversation_id']))?.messageCount, 2);
    assert.equal((r.body['suggestion'] as { content: string }).content, 'Business is $25 per user per month.');
  });

  it('assist_dialog with no match starts a new im conversation; suggestions never trigger a delivery', async () => {
    const r = await h.post({ event_type: 'assist_dialog', msg_id: mid(), from_user_id: `fresh-${mid()}`, content: 'Pro plan price?' });
    assert.deepEqual(r.body['context'], { reused: false, matched_by: null, messages: 1 });
    const conv = h.admin.conversations.byId(String(r.body['conversation_id']));
    assert.equal(conv?.channel, 'im');
    assert.equal(conv?.autoReply, 'active');
  });

  it('group conversations are keyed by group; staff replies with to_user_id join the customer\'s', async () => {
    const a = await h.post(customer({ group_id: 'room-1', from_user_id: 'u1' }));
    const b = await h.post(customer({ group_id: 'room-1', from_user_id: 'u2' }));
    assert.equal(a.body['conversation_id'], b.body['conversation_id']);
    const c = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'agent', from_user_type: 3, to_user_id: 'u1', content: 'hi' });
    const d = await h.post(customer({ from_user_id: 'u1' }));
    assert.equal(c.body['conversation_id'], d.body['conversation_id']);
    assert.notEqual(c.body['conversation_id'], a.body['conversation_id']);
  });
});

describe('engine time-out', () => {
  it('an engine slower than the time-out is 504 engine_timeout, and nothing is stored', async () => {
    let asked = 0;
    const slow: Engine = { name: 'slow', answer: () => (asked++, new Promise(() => {})) };
    const h = await startHarness({ engine: slow, config: { engineTimeoutMs: 30_000 } });
    h.addClient('acme');
    const msgId = mid();
    const pending = h.post({ event_type: 'assist_dialog', msg_id: msgId, from_user_id: 'u', content: 'hi' });
    const { eventually } = await import('./helpers/receiver.ts');
    await eventually(() => asked === 1, 'the engine asked');
    h.clock.advance(29_999);
    h.clock.advance(1);
    const r = await pending;
    assert.equal(r.status, 504);
    assert.equal(r.body.code, 'engine_timeout');
    assert.match(String(r.body['detail']), /within 30000 ms/);
    assert.equal(h.admin.idempotency.get('acme', 'assist_dialog', msgId), undefined);
    await h.stop();
  });
});
