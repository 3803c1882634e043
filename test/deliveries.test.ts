import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { startReceiver, eventually, type Receiver } from './helpers/receiver.ts';
import { scriptedEngine } from './helpers/engines.ts';

const SECRET = 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz';

describe('deliveries to send_url (section 7)', () => {
  let h: Harness;
  let rx: Receiver;

  beforeEach(async () => {
    rx = await startReceiver();
    h = await startHarness({
      engine: scriptedEngine().engine,
      config: { deliveryTimeoutMs: 300 },
      resolve: (host, cb) => cb(null, host === 'metadata.attacker.test' ? [{ address: '169.254.169.254', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]),
    });
    h.addClient('acme', { sendUrl: rx.url }, SECRET);
  });
  afterEach(async () => {
    await h.stop();
    await rx.close();
  });

  async function reply(text: string, extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const r = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-1', from_user_type: 2, content: text, ...extra });
    h.clock.advance(2000);
    return r.body;
  }
  const delivery = () => h.admin.deliveries.list(undefined, 1)[0]!;

  it('retries on 5xx along the schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), then dead with every attempt kept', async () => {
    rx.respond = () => ({ status: 503 });
    await reply('hello');
    await eventually(() => rx.received.length === 1, 'first try');
    const schedule = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
    for (const [i, wait] of schedule.entries()) {
      await eventually(() => delivery().attempts === i + 1, `attempt ${i + 1} recorded`);
      h.clock.advance(wait - 1);
      await h.quiesce();
      assert.equal(rx.received.length, i + 1, `not before ${wait} ms`);
      h.clock.advance(1);
      await eventually(() => rx.received.length === i + 2, `retry ${i + 1}`);
    }
    const dead = await eventually(() => delivery().state === 'dead' && delivery(), 'dead');
    assert.equal(dead.attempts, 8);
    const attempts = h.admin.deliveries.attempts(dead.id);
    assert.deepEqual(attempts.map((a) => a.status), Array(8).fill(503));
    assert.deepEqual(attempts.map((a) => a.outcome), [...Array(7).fill('retry'), 'dead']);
    assert.equal(new Set(rx.received.map((r) => r.key)).size, 1, 'the same Idempotency-Key every time');
  });

  it('a dead delivery can be retried by the operator, with a fresh schedule', async () => {
    rx.respond = () => ({ status: 410 });
    await reply('hello');
    const dead = await eventually(() => delivery().state === 'dead' && delivery(), 'dead at once');
    assert.equal(dead.attempts, 1, 'a 4xx other than 408/429 is permanent');
    rx.respond = () => ({ status: 200 });
    const changed = await h.service.retryDelivery(dead.id);
    assert.equal(changed, true);
    await eventually(() => delivery().state === 'sent', 'sent after the manual retry');
    assert.equal(delivery().attempts, 2);
    assert.equal(await h.service.retryDelivery(dead.id), false, 'only dead deliveries can be retried');
  });

  it('honours Retry-After up to an hour instead of the schedule', async () => {
    let n = 0;
    rx.respond = () => (n++ === 0 ? { status: 429, headers: { 'retry-after': '120' } } : { status: 200 });
    await reply('hello');
    await eventually(() => delivery().attempts === 1, 'first attempt');
    h.clock.advance(119_999);
    await h.quiesce();
    assert.equal(rx.received.length, 1);
    h.clock.advance(1);
    await eventually(() => delivery().state === 'sent', 'sent at Retry-After');
  });

  it('does not follow redirects: a 3xx is a failure to retry', async () => {
    rx.respond = (_r, i) => (i === 0 ? { status: 302, headers: { location: 'http://169.254.169.254/' } } : { status: 204 });
    await reply('hello');
    await eventually(() => delivery().attempts === 1, 'first attempt');
    assert.equal(delivery().state, 'pending');
    assert.equal(delivery().lastStatus, 302);
    h.clock.advance(5000);
    await eventually(() => delivery().state === 'sent', 'sent on retry');
    assert.equal(rx.received.length, 2);
  });

  it('a receiver that does not answer in time is a failure to retry', async () => {
    const silent: Server = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    h.addClient('slow', { sendUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hook` }, SECRET);
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'c', from_user_type: 2, content: 'hi' }, { client: 'slow' });
    h.clock.advance(2000);
    const d = await eventually(() => delivery().attempts === 1 && delivery(), 'a timed-out attempt');
    assert.equal(d.state, 'pending');
    assert.match(d.lastError ?? '', /no answer within 300 ms/);
    silent.closeAllConnections();
    silent.close();
  });

  it('keeps order per conversation: a later reply waits while an earlier one is pending', async () => {
    rx.respond = (_r, i) => (i === 0 ? { status: 500 } : { status: 200 });
    await reply('first');
    await eventually(() => rx.received.length === 1, 'first try of reply 1');
    await reply('second');
    await h.quiesce();
    assert.equal(rx.received.length, 1, 'reply 2 waits behind reply 1');
    await reply('another conversation', { from_user_id: 'cust-2' });
    await eventually(() => rx.received.length === 2, 'other conversations are not blocked');
    h.clock.advance(5000);
    await eventually(() => rx.received.length === 4, 'reply 1 then reply 2');
    const c1 = rx.received.filter((r) => r.body.message_info['to_user_id'] === 'cust-1').map((r) => r.body.message_info['content']);
    assert.deepEqual(c1, ['answer to: first', 'answer to: first', 'answer to: second']);
  });

  it('stop_auto_reply cancels undelivered replies and says how many; they are never sent', async () => {
    rx.respond = () => ({ status: 500 });
    await reply('one');
    await eventually(() => delivery().attempts === 1, 'failed first try');
    const stop = await h.post({ event_type: 'cmd_dialog', msg_id: mid(), from_user_id: 'cust-1', content: 'stop_auto_reply' });
    assert.equal(stop.body['cancelled_replies'], 1);
    h.clock.advance(10 * 60_000);
    await h.quiesce();
    assert.equal(rx.received.length, 1);
    assert.equal(delivery().state, 'cancelled');
  });

  it('re-checks before every attempt: a conversation paused by staff cancels a pending retry', async () => {
    rx.respond = () => ({ status: 500 });
    await reply('one');
    await eventually(() => delivery().attempts === 1, 'failed first try');
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'agent', from_user_type: 3, to_user_id: 'cust-1', content: 'on it' });
    h.clock.advance(5000);
    await eventually(() => delivery().state === 'cancelled', 'cancelled at retry time');
    assert.equal(rx.received.length, 1);
    assert.match(delivery().lastError ?? '', /paused/);
  });

  it('checks the resolved address at connect time: a name pointing at a metadata address is refused', async () => {
    h.addClient('sneaky', { sendUrl: 'http://metadata.attacker.test:9/hook' }, SECRET);
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'c', from_user_type: 2, content: 'hi' }, { client: 'sneaky' });
    h.clock.advance(2000);
    const d = await eventually(() => delivery().state === 'dead' && delivery(), 'refused');
    assert.match(d.lastError ?? '', /169\.254\.169\.254/);
  });
});

describe('the reply trace and restarts', () => {
  it('a message\'s trace goes from its decision to every delivery attempt', async () => {
    const rx = await startReceiver();
    const h = await startHarness({ engine: scriptedEngine().engine });
    h.addClient('acme', { sendUrl: rx.url }, SECRET);
    rx.respond = (_r, i) => (i === 0 ? { status: 502 } : { status: 200 });
    const m = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'c', from_user_type: 2, content: 'where is my parcel?' });
    h.clock.advance(2000);
    await eventually(() => rx.received.length === 1, 'first try');
    await h.restart();
    h.clock.advance(5000);
    await eventually(() => rx.received.length === 2, 'the retry after a restart');
    const row = h.admin.messages.findAutoMessage('acme', String(m.body['msg_id']))!;
    const trace = await eventually(() => h.admin.trace.forMessage(row.id)?.delivery?.state === 'sent' && h.admin.trace.forMessage(row.id), 'sent');
    assert.deepEqual(trace.decision, { scheduled: true, reason: 'scheduled' });
    assert.equal(trace.outcome, 'answered');
    assert.equal(trace.reply?.content, 'answer to: where is my parcel?');
    assert.equal(trace.reply?.engine, 'scripted');
    assert.deepEqual(trace.delivery?.attempts.map((a) => [a.status, a.outcome]), [[502, 'retry'], [200, 'sent']]);
    await h.stop();
    await rx.close();
  });
});
