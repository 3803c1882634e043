import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { startReceiver, eventually, type Receiver } from './helpers/receiver.ts';
import { scriptedEngine } from './helpers/engines.ts';
import { openConsole, type ConsoleClient } from './helpers/console.ts';

const SECRET = 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz';
const ANN = { id: 'ann', name: 'Ann Lee' };

/**
 * Retry now, Cancel, why a delivery waits, and how a retry turned out, over the console API as
 * the console calls it, against the real service and a real receiver.
 */
describe('delivery actions over the console API', () => {
  let h: Harness;
  let rx: Receiver;
  let c: ConsoleClient;

  before(async () => {
    rx = await startReceiver();
    h = await startHarness({ engine: scriptedEngine().engine });
    h.addClient('acme', { sendUrl: rx.url, boundAccount: 'shop-bot' }, SECRET);
    c = await openConsole(h);
  });
  after(async () => {
    await c.close();
    await h.stop();
    await rx.close();
  });

  async function customer(from: string, content: string): Promise<string> {
    const r = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: from, from_user_type: 2, content });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return String(r.body['conversation_id']);
  }
  const sentTo = (content: string) => rx.received.filter((r) => r.body.message_info['content'] === content).length;
  const now = (id: number) => c.ok('getDeliveries', { ids: [id] }).then((l) => l[0]!);
  const line = async (conversationId: string, deliveryId: number) =>
    (await c.ok('getTranscript', { conversationId })).entries.find((e) => e.delivery?.id === deliveryId)!.delivery!;

  it('Retry now, Retry and Cancel need the operator first', async () => {
    try {
      for (const [method, input] of [
        ['retryDeliveries', { ids: [1] }],
        ['retryDeliveries', {}],
        ['retryDelivery', { deliveryId: 1 }],
        ['cancelDelivery', { deliveryId: 1 }],
      ] as const) {
        const r = await c.call(method, input);
        assert.equal(!r.ok && r.error.code, 'operator_required', method);
      }
    } finally {
      await c.ok('setOperator', ANN);
    }
  });

  it('a reply behind one answered 500 says what it waits for; Retry now tries that one at once, its schedule going on; Cancel lets the next go', async () => {
    rx.respond = (r) => ({ status: r.body.message_info['content'] === 'first answer' ? 500 : 200 });
    const conv = await customer('cust-1', 'where is my parcel?');
    const first = await c.ok('sendReply', { conversationId: conv, content: 'first answer' });
    await eventually(() => sentTo('first answer') === 1, 'the first try of the first reply');
    const second = await c.ok('sendReply', { conversationId: conv, content: 'second answer' });
    await h.quiesce();
    assert.equal(sentTo('second answer'), 0, 'in order per conversation: the second waits');

    const t0 = h.clock.now();
    assert.deepEqual(await line(conv, first.deliveryId), { id: first.deliveryId, state: 'pending', attempts: 1, lastError: 'HTTP 500', nextAttemptAt: t0 + 5_000, behind: null });
    assert.deepEqual((await line(conv, second.deliveryId)).behind, { id: first.deliveryId, failing: true, nextAttemptAt: t0 + 5_000 });

    // The 5 s retry fails too: the next is 5 minutes away. Retry now does not wait for it.
    h.clock.advance(5_000);
    await eventually(() => sentTo('first answer') === 2, 'the scheduled retry');
    await eventually(async () => (await now(first.deliveryId)).attempts === 2, 'recorded');
    h.clock.advance(10_000);
    assert.equal((await now(first.deliveryId)).nextAttemptAt, t0 + 5_000 + 300_000);
    const retried = await c.ok('retryDeliveries', { ids: [first.deliveryId] });
    assert.deepEqual(retried, { retried: 1, deliveries: [{ id: first.deliveryId, attempts: 2 }] });
    await eventually(() => sentTo('first answer') === 3, 'tried at once, the clock not moved');
    const after = await eventually(async () => {
      const d = await now(first.deliveryId);
      return d.attempts === 3 && d;
    }, 'the third attempt recorded');
    assert.deepEqual([after.state, after.lastStatus, after.nextAttemptAt], ['pending', 500, h.clock.now() + 300_000], 'the early try failed: the next waits the 5 min it was waiting out, not 30');
    assert.equal(sentTo('second answer'), 0, 'still behind it');

    // Cancel: never sent again, not even at its next try; the reply behind it goes at once.
    assert.deepEqual(await c.ok('cancelDelivery', { deliveryId: first.deliveryId }), { reason: 'cancelled by Ann Lee from the console', tryOnTheWire: false, attempts: 3 });
    await eventually(() => sentTo('second answer') === 1, 'the second reply, the clock not moved');
    await eventually(async () => (await now(second.deliveryId)).state === 'sent', 'delivered');
    h.clock.advance(3_600_000);
    await h.quiesce();
    assert.equal(sentTo('first answer'), 3);
    assert.deepEqual(await line(conv, first.deliveryId), { id: first.deliveryId, state: 'cancelled', attempts: 3, lastError: 'cancelled by Ann Lee from the console' });
    assert.ok(
      (await c.ok('listDeliveries', { states: ['cancelled'] })).some((d) => d.id === first.deliveryId && d.lastError === 'cancelled by Ann Lee from the console'),
      'listed with the cancelled ones, naming who cancelled it',
    );

    const audit = await c.ok('listAudit', { conversationId: conv });
    assert.deepEqual(audit.slice(0, 2).map((a) => [a.action, a.operator.name]), [['cancel', 'Ann Lee'], ['retry', 'Ann Lee']]);
    assert.deepEqual(JSON.parse(audit[0]!.detail!), { delivery: first.deliveryId, was: 'retrying', attempts: 3 });
  });

  it('refusals are data: an unknown delivery, and one that is not retrying or dead', async () => {
    const sent = (await c.ok('getDeliveries', { ids: [1, 2, 3, 99_999] })).find((d) => d.state === 'sent')!;
    const cancelled = (await c.ok('listDeliveries', { states: ['cancelled'] }))[0]!;
    const refusals = [
      [await c.call('cancelDelivery', { deliveryId: 99_999 }), 'not_found', /^no delivery 99999$/],
      [await c.call('retryDeliveries', { ids: [99_999] }), 'not_found', /^no delivery 99999$/],
      [await c.call('cancelDelivery', { deliveryId: sent.id }), 'wrong_state', /is sent: only a retrying or dead delivery can be cancelled/],
      [await c.call('cancelDelivery', { deliveryId: cancelled.id }), 'wrong_state', /is cancelled/],
      [await c.call('retryDeliveries', { ids: [sent.id] }), 'wrong_state', /is sent: only a dead or retrying delivery can be retried/],
      [await c.call('retryDelivery', { deliveryId: cancelled.id }), 'wrong_state', /is cancelled/],
    ] as const;
    for (const [r, code, message] of refusals) {
      assert.equal(!r.ok && r.error.code, code);
      assert.match(!r.ok ? r.error.message : '', message);
    }
  });

  it('Retry all dead answers with what it retried; each one\'s next attempt is its outcome, delivered or failed again', async () => {
    rx.respond = (r) => ({ status: String(r.body.message_info['content']).includes('gone') ? 410 : 400 });
    const ids: number[] = [];
    for (const [who, text] of [['d-1', 'gone for good'], ['d-2', 'recovers'], ['d-3', 'gone again']] as const) {
      const conv = await customer(who, 'hello');
      ids.push((await c.ok('sendReply', { conversationId: conv, content: text })).deliveryId);
    }
    await eventually(async () => (await c.ok('getDeliveries', { ids })).every((d) => d.state === 'dead'), 'three dead at once (4xx)');
    rx.respond = (r) => ({ status: String(r.body.message_info['content']).includes('gone') ? 410 : 200 });
    const retried = await c.ok('retryDeliveries', {});
    assert.deepEqual(retried.deliveries, ids.map((id) => ({ id, attempts: 1 })), 'every dead one, oldest first, with its attempts before the retry');
    const settled = await eventually(async () => {
      const l = await c.ok('getDeliveries', { ids });
      return l.every((d) => d.attempts === 2) && l;
    }, 'each tried once more');
    assert.deepEqual(settled.map((d) => [d.state, d.lastStatus]), [['dead', 410], ['sent', 200], ['dead', 410]]);
  });

  it('Cancel while a try is on the wire: the answer says that try already went; the receiver accepting it makes the reply sent', async () => {
    let answer = (): void => {};
    const held = new Promise<void>((resolve) => (answer = resolve));
    rx.respond = (r) => (r.body.message_info['content'] !== 'on the wire' ? { status: 200 } : sentTo('on the wire') === 1 ? { status: 503 } : { status: 200, hold: held });
    const conv = await customer('w-1', 'hello?');
    const { deliveryId } = await c.ok('sendReply', { conversationId: conv, content: 'on the wire' });
    await eventually(async () => (await now(deliveryId)).attempts === 1, 'the first try failed (503)');
    await c.ok('retryDeliveries', { ids: [deliveryId] });
    await eventually(() => sentTo('on the wire') === 2, 'the retry at the receiver, its answer held');
    // Its attempts before the cancel: the try on the wire, once recorded, is the next one.
    assert.deepEqual(await c.ok('cancelDelivery', { deliveryId }), { reason: 'cancelled by Ann Lee from the console', tryOnTheWire: true, attempts: 1 });
    answer();
    const d = await eventually(async () => {
      const n = await now(deliveryId);
      return n.attempts === 1 + 1 && n;
    }, 'the try recorded');
    assert.deepEqual([d.state, d.lastStatus], ['sent', 200], 'the customer has it: "cancelled, not sent" would be untrue');
    assert.deepEqual(d.lastTry, { status: 200, error: null }, 'that try\'s own answer');
  });
});
