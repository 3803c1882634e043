import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { eventually } from './helpers/receiver.ts';
import { scriptedEngine } from './helpers/engines.ts';
import { signBody } from './helpers/sign.ts';
import { DOC, flat, section } from './helpers/protocol-doc.ts';

/** What docs/protocol.md says the server does in groups, assist_dialog and stop_auto_reply, done for real. */
type Res = Awaited<ReturnType<Harness['post']>>;

describe('docs/protocol.md: what it says groups, assist_dialog and stop_auto_reply do', () => {
  let h: Harness;
  let engine: ReturnType<typeof scriptedEngine>;
  let bareSecret: string;
  before(async () => {
    engine = scriptedEngine();
    h = await startHarness({ engine: engine.engine });
    bareSecret = h.addClient('bare', { sendUrl: 'http://127.0.0.1:9/hook' });
    h.addClient('bound', { sendUrl: 'http://127.0.0.1:9/hook', boundAccount: 'bot-acme' });
    h.addClient('bots', { sendUrl: 'http://127.0.0.1:9/hook', botIds: ['bot-acme'] });
  });
  after(() => h.stop());

  const conversationOf = (r: Res): string => String(r.body['conversation_id']);
  const transcript = (conversationId: string): string[] => h.admin.messages.context(conversationId, Number.MAX_SAFE_INTEGER, 100).map((e) => e.content);

  it('a group @-mention wakes the bot only for a client with a bound account or bot ids; the doc says how to set them', async () => {
    const mention = (client: string) =>
      h.post({ event_type: 'auto_dialog', msg_id: mid('grp'), group_id: `g-${client}`, from_user_id: 'u-1', from_user_type: 2, at_list: ['bot-acme'], content: 'hi @bot-acme' }, { client });
    assert.deepEqual((await mention('bare')).body['reply'], { scheduled: false, reason: 'not_mentioned' });
    assert.deepEqual((await mention('bound')).body['reply'], { scheduled: true, reason: 'scheduled' });
    assert.deepEqual((await mention('bots')).body['reply'], { scheduled: true, reason: 'scheduled' });
    const s7 = flat(section('## 7. When auto_dialog answers'));
    assert.ok(s7.includes('every group message is answered `not_mentioned`'), 'section 7 warns about a bare client');
    for (const command of ['npm run cli -- clients set acme --bound-account bot-acme', 'npm run cli -- clients set acme --bot-ids', 'npm run cli -- clients show acme']) {
      assert.ok(s7.includes(command), `section 7 gives ${command}`);
    }
  });

  it('assist_dialog by msg_id answers the stored message and ignores its own content; asking again replays, conflicts, or appends', async () => {
    const first = await h.post({ event_type: 'auto_dialog', msg_id: 'as-1', from_user_id: 'cust-as', from_user_type: 2, content: 'Where is my parcel?' }, { client: 'bare' });
    const conv = conversationOf(first);
    const before = transcript(conv);
    const assist = { event_type: 'assist_dialog', msg_id: 'as-1', from_user_id: 'someone-else', content: 'not what the customer wrote' };
    const a = await h.post(assist, { client: 'bare' });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.deepEqual(a.body['context'], { reused: true, matched_by: 'msg_id', messages: 1 });
    assert.equal(conversationOf(a), conv, "the auto_dialog message's conversation, not someone-else's");
    assert.equal((a.body['suggestion'] as { content: string }).content, 'answer to: Where is my parcel?', "the stored message is answered, not the assist's content");
    assert.deepEqual(transcript(conv), before, 'nothing appended');

    const calls = engine.calls.length;
    const again = await h.post(assist, { client: 'bare', timestamp: h.now() + 1 });
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body['suggestion'], a.body['suggestion'], 'the same msg_id gives the first suggestion again');
    assert.equal(engine.calls.length, calls, 'without asking the engine');

    const changed = await h.post({ ...assist, content: 'another try' }, { client: 'bare' });
    assert.equal(changed.status, 409);
    assert.equal(changed.body.code, 'msg_id_conflict');

    const fresh = await h.post({ event_type: 'assist_dialog', msg_id: 'as-1-b', from_user_id: 'cust-as', from_user_type: 2, content: 'Any news on my parcel?' }, { client: 'bare' });
    assert.deepEqual(fresh.body['context'], { reused: true, matched_by: 'peer', messages: 2 });
    assert.deepEqual(transcript(conv), [...before, 'Any news on my parcel?'], 'a new msg_id is appended as a new message');

    const alone = await h.post({ event_type: 'assist_dialog', msg_id: 'as-2', from_user_id: 'cust-new', content: 'hello' }, { client: 'bare' });
    assert.deepEqual(alone.body['context'], { reused: false, matched_by: null, messages: 1 }, 'reused is false exactly when matched_by is null');
    const conversations = flat(section('### Conversations'));
    for (const said of ['fields are **not used**', 'it is always `matched_by !== null`', 'the **first suggestion again**', '`409 msg_id_conflict`', '**appended to the conversation as a new message**']) {
      assert.ok(conversations.includes(said), `the doc says: ${said}`);
    }
  });

  it('an integer beyond 2^53 is signed and stored rounded; the doc says to send big ids as strings', async () => {
    const raw = '{"event_type":"auto_dialog","msg_id":"big-1","from_user_id":"cust-big","from_user_type":2,"content":"hi","order_id":12345678901234567891}';
    const info = JSON.parse(raw) as Record<string, unknown>;
    const body = JSON.stringify(signBody('bare', bareSecret, info, h.now())).replace('"order_id":12345678901234567000', '"order_id":12345678901234567891');
    assert.ok(body.includes('12345678901234567891'), 'the exact digits are on the wire');
    const r = await h.postRaw(body);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const stored = h.admin.messages.messageInfo(h.admin.messages.findAutoMessage('bare', 'big-1')!.id)!;
    assert.equal(stored['order_id'], 12345678901234567000);
    assert.ok(flat(DOC).includes('`12345678901234567891` becomes `12345678901234567000`'));
    assert.ok(flat(DOC).includes('Send large ids (order numbers, snowflake ids) as **strings**'));
  });

  it('an X-Request-Id outside the allowed characters is replaced, not refused, as the doc says', async () => {
    const info = { event_type: 'website_dialog', msg_id: mid('rid'), from_user_id: 'v-rid', content: 'hi' };
    const res = await fetch(h.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'my id/1' }, body: JSON.stringify(signBody('bare', bareSecret, info, h.now())) });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('x-request-id')!, /^req_/);
    assert.ok(flat(DOC).includes('is **not refused: it is silently replaced** by a fresh `req_…` id'));
  });

  it('stop_auto_reply counts the replies made and not delivered; messages still in their quiet period are dropped uncounted', async () => {
    const waiting = await h.post({ event_type: 'auto_dialog', msg_id: 'st-1', from_user_id: 'cust-st', from_user_type: 2, content: 'hello?' }, { client: 'bare' });
    assert.deepEqual(waiting.body['reply'], { scheduled: true, reason: 'scheduled' });
    const stop = await h.post({ event_type: 'cmd_dialog', msg_id: 'st-c1', from_user_id: 'cust-st', content: 'stop_auto_reply' }, { client: 'bare' });
    assert.equal(stop.body['cancelled_replies'], 0, 'the waiting message had no reply yet');
    assert.equal(h.admin.messages.replyTrace(h.admin.messages.findAutoMessage('bare', 'st-1')!.id)?.outcome, 'cancelled', 'but it will never be answered');

    // A reply made, its delivery failing (nothing listens on port 9) and waiting for a retry.
    const conv2 = conversationOf(await h.post({ event_type: 'auto_dialog', msg_id: 'st-2', from_user_id: 'cust-st2', from_user_type: 2, content: 'hello?' }, { client: 'bare' }));
    h.clock.advance(2000);
    await eventually(() => h.admin.deliveries.list('pending', 100).some((d) => d.conversationId === conv2 && d.attempts >= 1), 'a failed first attempt');
    const stop2 = await h.post({ event_type: 'cmd_dialog', msg_id: 'st-c2', from_user_id: 'cust-st2', content: 'stop_auto_reply' }, { client: 'bare' });
    assert.equal(stop2.body['cancelled_replies'], 1);
    assert.ok(flat(DOC).includes('Customer messages still in their quiet period (no reply made yet) are dropped too, but not counted'));
  });
});
