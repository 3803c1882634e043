import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { startReceiver, eventually, deliveryProblem, DELIVERY_TOLERANCE_SECONDS, type Receiver, type Received } from './helpers/receiver.ts';
import { cliAsync, secretFrom } from './helpers/processes.ts';
import { scriptedEngine } from './helpers/engines.ts';

const SECRET = 'secret-acme-0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * Section 7 and docs/protocol.md section 8: every attempt is signed anew with a fresh timestamp,
 * with the client's newest secret. The receiver here runs on the service's hand-moved clock and
 * refuses what a real integrator's receiver would: a bad signature, or a timestamp more than 300 s
 * from its clock.
 */
describe('deliveries are signed per attempt, with a fresh timestamp and the newest secret', () => {
  let h: Harness;
  let rx: Receiver;

  beforeEach(async () => {
    h = await startHarness({ engine: scriptedEngine().engine });
    rx = await startReceiver('/hook', { now: () => h.clock.now() });
    h.addClient('acme', { sendUrl: rx.url }, SECRET);
  });
  afterEach(async () => {
    await h.stop();
    await rx.close();
  });

  const delivery = () => h.admin.deliveries.list(undefined, 1)[0]!;
  async function customerAsks(text: string): Promise<void> {
    const r = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-1', from_user_type: 2, content: text });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    h.clock.advance(2000); // the quiet period
  }
  const nth = (n: number): Promise<Received> => eventually(() => rx.received[n], `delivery attempt ${n + 1}`);

  it('a retry more than 300 s after the first attempt carries a new timestamp and a signature valid for it', async () => {
    // The first attempt fails and asks for a retry in 15 minutes, far outside the 300 s window.
    rx.respond = (_r, i) => (i === 0 ? { status: 503, headers: { 'retry-after': '900' } } : { status: 200 });
    await customerAsks('hello');
    const first = await nth(0);
    assert.equal(deliveryProblem(first, SECRET), null, 'the first attempt verifies on the receiver clock');
    assert.equal(first.body.timestamp, h.now(), 'signed at the moment of the attempt');
    const failed = await eventually(() => delivery().attempts === 1 && delivery(), 'the failed attempt recorded');
    assert.equal(failed.nextAttemptAt, first.body.timestamp * 1000 + 900_000, 'the retry is due in 900 s (Retry-After)');

    h.clock.advance(900_000);
    const second = await nth(1);
    await eventually(() => delivery().state === 'sent', 'sent on the retry');

    assert.equal(deliveryProblem(second, SECRET), null, 'the retry verifies: its signature matches its own timestamp, within 300 s of the receiver clock');
    assert.equal(second.key, first.key, 'the same Idempotency-Key');
    assert.deepEqual(second.body.message_info, first.body.message_info, 'the same message_info');
    assert.ok(second.body.timestamp >= first.body.timestamp + 900, `a fresh timestamp (first ${first.body.timestamp}, retry ${second.body.timestamp})`);
    assert.notEqual(second.body.signature, first.body.signature, 'a new signature');
    // What the retry would have been refused for had it reused the first attempt's signature.
    const stale = { ...second, body: { ...second.body, timestamp: first.body.timestamp, signature: first.body.signature } };
    assert.match(String(deliveryProblem(stale, SECRET)), new RegExp(`more than ${DELIVERY_TOLERANCE_SECONDS} s`), 'the receiver does check the window');
  });

  it('after `clients rotate` (two active secrets) a retry and a new reply are signed with the newest secret only', async () => {
    rx.respond = (_r, i) => (i === 0 ? { status: 503 } : { status: 200 });
    await customerAsks('hello');
    const first = await nth(0);
    assert.equal(deliveryProblem(first, SECRET), null, 'before the rotation: the only secret');
    await eventually(() => delivery().attempts === 1, 'the failed attempt recorded');

    const rotated = await cliAsync(h.dataDir, 'clients', 'rotate', 'acme');
    assert.equal(rotated.status, 0, rotated.stderr);
    const newest = secretFrom(rotated.stdout);
    assert.notEqual(newest, SECRET);
    assert.equal(h.admin.clients.activeSecrets('acme').length, 2, 'the previous secret stays active alongside the new one');

    // The retry is due 5 s after the first try.
    h.clock.advance(5_000);
    const retry = await nth(1);
    assert.equal(retry.key, first.key, 'the retry of the same reply');
    assert.equal(deliveryProblem(retry, newest), null, 'the retry is signed with the newest secret');
    assert.notEqual(deliveryProblem(retry, SECRET), null, 'and not with the previous one');

    // A customer who still signs with the previous secret is accepted (both are active), and the
    // reply to them goes out signed with the newest.
    await customerAsks('and another thing');
    const next = await nth(2);
    assert.notEqual(next.key, first.key, 'a new reply');
    assert.equal(deliveryProblem(next, newest), null, 'a new reply is signed with the newest secret');
    assert.notEqual(deliveryProblem(next, SECRET), null, 'and not with the previous one');
  });
});
