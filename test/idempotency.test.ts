import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { signBody } from './helpers/sign.ts';

describe('section 5: idempotency', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    h.addClient('acme', { sendUrl: 'http://127.0.0.1:9/hook' });
    h.admin.kb.add('opening hours', 'We are open 9 to 6.', 0);
  });
  after(() => h.stop());

  it('a resend with the same content returns the first response again, marked, without a second message', async () => {
    const info = { event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'c1', from_user_type: 2, content: 'hi' };
    const first = await h.post(info);
    h.clock.advance(5000);
    const second = await h.post(info);
    assert.equal(second.status, first.status);
    assert.deepEqual(second.body, first.body);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const lines = h.admin.messages.context(String(first.body['conversation_id']), Number.MAX_SAFE_INTEGER, 50);
    assert.equal(lines.filter((l) => l.kind === 'message').length, 1);
  });

  it('the same msg_id with different content is 409 msg_id_conflict', async () => {
    const msgId = mid();
    await h.post({ event_type: 'auto_dialog', msg_id: msgId, from_user_id: 'c1', from_user_type: 2, content: 'one' });
    const r = await h.post({ event_type: 'auto_dialog', msg_id: msgId, from_user_id: 'c1', from_user_type: 2, content: 'two' });
    assert.equal(r.status, 409);
    assert.equal(r.body.code, 'msg_id_conflict');
  });

  it('msg_id is unique per (client, event_type): the same id in another event_type is a new message', async () => {
    const msgId = mid();
    const a = await h.post({ event_type: 'auto_dialog', msg_id: msgId, from_user_id: 'c9', from_user_type: 2, content: 'opening hours?' });
    const b = await h.post({ event_type: 'website_dialog', msg_id: msgId, from_user_id: 'c9', content: 'opening hours?' });
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.notEqual(a.body['conversation_id'], b.body['conversation_id']);
  });

  it('a website_dialog resend returns the same answer without asking the engine again', async () => {
    const info = { event_type: 'website_dialog', msg_id: mid(), from_user_id: 'w1', content: 'opening hours?' };
    const first = await h.post(info);
    h.admin.kb.add('opening hours', 'CHANGED', 0);
    const again = await h.post(info);
    assert.deepEqual(again.body, first.body);
  });

  it('concurrent copies of one message store it once', async () => {
    const info = { event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'race', from_user_type: 2, content: 'hi' };
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => h.post(info, { timestamp: h.now() - i })));
    assert.ok(results.every((r) => r.status === 200));
    assert.equal(results.filter((r) => r.headers.get('idempotent-replayed') === 'true').length, 7);
    assert.equal(h.admin.conversations.byId(String(results[0]!.body['conversation_id']))?.messageCount, 1);
  });

  it('without msg_id the server makes one (m_ prefix) and returns it', async () => {
    const r = await h.post({ event_type: 'auto_dialog', from_user_id: 'c2', from_user_type: 2, content: 'no id' });
    assert.match(String(r.body['msg_id']), /^m_[A-Za-z0-9_-]{16}$/);
  });

  it('survives a restart: the stored response comes back, and a replayed signature is still refused', async () => {
    const info = { event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'c3', from_user_type: 2, content: 'durable?' };
    const first = await h.post(info);
    const noId = { event_type: 'auto_dialog', from_user_id: 'c3', from_user_type: 2, content: 'no msg_id' };
    const { signBody } = await import('./helpers/sign.ts');
    const raw = JSON.stringify(signBody('acme', 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz', noId, h.now()));
    assert.equal((await h.postRaw(raw)).status, 200);
    await h.restart();
    const again = await h.post(info);
    assert.deepEqual(again.body, first.body);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    const conflict = await h.post({ ...info, content: 'different' });
    assert.equal(conflict.body.code, 'msg_id_conflict');
    assert.equal((await h.postRaw(raw)).body.code, 'replayed_request', 'the replay store is durable too');
  });
});

describe('section 5: idempotency records are pruned after idempotencyRetentionHours', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ config: { idempotencyRetentionHours: 1 } });
    h.addClient('acme', { sendUrl: 'http://127.0.0.1:9/hook' });
  });
  after(() => h.stop());

  const count = (sql: string, ...args: Array<string | number>): number =>
    Number((h.admin.connection.prepare(`SELECT count(*) AS n FROM idempotency ${sql}`).get(...args) as { n: number }).n);

  it('old records go in batches while ingest continues; retries and replays inside the windows are still recognised', async () => {
    const old = h.clock.now() - 2 * 3_600_000;
    h.admin.connection.exec('BEGIN');
    for (let i = 0; i < 2500; i++) {
      h.admin.idempotency.put({ clientId: 'acme', eventType: 'auto_dialog', msgId: `old-${i}`, contentHash: 'x', status: 200, body: '{}', conversationId: 'c', messageId: null, signature: `sig-${i}`, at: old });
    }
    h.admin.connection.exec('COMMIT');
    const info = { event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'p1', from_user_type: 2, content: 'keep me' };
    const first = await h.post(info);
    const raw = JSON.stringify(signBody('acme', 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz', { event_type: 'auto_dialog', from_user_id: 'p2', from_user_type: 2, content: 'no msg_id' }, h.now()));
    assert.equal((await h.postRaw(raw)).status, 200);

    // The next maintenance pass, a minute on, with requests arriving while it deletes.
    h.clock.advance(60_000);
    const during = await Promise.all(
      Array.from({ length: 40 }, (_, i) => h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: `p-${i % 5}`, from_user_type: 2, content: `during ${i}` })),
    );
    assert.deepEqual([...new Set(during.map((r) => r.status))], [200], 'ingest is not refused while pruning');
    // Pruning runs on the writer thread, a batch per write: wait for the pass to end, not for time.
    await h.quiesce();
    assert.equal(count("WHERE msg_id LIKE 'old-%'"), 0, 'records past the retention went');
    assert.equal(count("WHERE msg_id NOT LIKE 'old-%'"), 42, 'newer records were kept');

    const retry = await h.post(info);
    assert.equal(retry.headers.get('idempotent-replayed'), 'true', 'a retry inside the retention gets the first response');
    assert.deepEqual(retry.body, first.body);
    await h.restart();
    assert.equal((await h.postRaw(raw)).body.code, 'replayed_request', 'a replay inside the window is refused, after a restart too');
  });

  it('assist_dialog still finds an auto_dialog message by msg_id after its record is pruned', async () => {
    const who = `assist-${mid()}`;
    const m1 = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: who, from_user_type: 2, content: 'How much is Pro?' });
    const target = String(m1.body['msg_id']);
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: who, from_user_type: 2, content: 'later' });
    // Two hours pass; the pass due at each minute is skipped while the one before it is still in
    // flight, and one more runs after it (with the clock two hours on).
    h.clock.advance(2 * 3_600_000);
    await h.quiesce();
    assert.equal(count('WHERE msg_id = ?', target), 0, 'the record is gone');
    const r = await h.post({ event_type: 'assist_dialog', msg_id: target, from_user_id: who, content: 'How much is Pro?' });
    assert.equal(r.status, 200);
    assert.equal(r.body['conversation_id'], m1.body['conversation_id']);
    assert.deepEqual(r.body['context'], { reused: true, matched_by: 'msg_id', messages: 1 });
  });
});
