import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { startReceiver, eventually, type Receiver } from './helpers/receiver.ts';
import { scriptedEngine } from './helpers/engines.ts';
import type { ServerConfig } from '../src/main/config/server-config.ts';

/**
 * Issue 27 item 6: the outbox's slots are shared per client and per send_url origin, so a receiver
 * that never answers holds its share for a try's time-out and no more, and another client's reply
 * is delivered at once, or (every slot held) at the next free slot ahead of the dead backlog.
 */
describe("one client's dead receiver does not hold up another client's deliveries", () => {
  let h: Harness | undefined;
  const receivers: Receiver[] = [];

  afterEach(async () => {
    // The receivers first: their held requests end at once, so the outbox stops without waiting.
    for (const rx of receivers.splice(0)) await rx.close();
    await h?.stop();
    h = undefined;
  });

  /** A receiver that takes every request and never answers. */
  async function deadReceiver(): Promise<Receiver> {
    const rx = await startReceiver();
    rx.respond = () => ({ status: 200, hold: new Promise<void>(() => {}) });
    receivers.push(rx);
    return rx;
  }

  async function start(config: Partial<ServerConfig>): Promise<Harness> {
    h = await startHarness({ engine: scriptedEngine().engine, config });
    return h;
  }

  /** `count` auto_dialog messages of `client` from distinct customers; their replies fall due 2 s later. */
  async function messages(client: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const r = await h!.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: `${client}-cust-${i}`, from_user_type: 2, content: `hello ${i}` }, { client });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
  }

  it("client B's reply is delivered while client A's dead receiver holds A's capped share of the slots", async () => {
    const dead = await deadReceiver();
    const live = await startReceiver();
    receivers.push(live);
    await start({ deliveryConcurrency: 4, deliveryConcurrencyPerClient: 2, deliveryConcurrencyPerOrigin: 4, deliveryTimeoutMs: 10_000 });
    h!.addClient('a', { sendUrl: dead.url });
    h!.addClient('b', { sendUrl: live.url });
    await messages('a', 6);
    h!.clock.advance(2000);
    await eventually(() => dead.received.length >= 2, "A's deliveries under way");
    await messages('b', 1);
    h!.clock.advance(2000);
    // Within the 3 s eventually waits, far less than A's 10 s tries: nothing of A has ended.
    await eventually(() => live.received.length === 1, "B's reply delivered");
    assert.equal(dead.received.length, 2, 'A never held more than its 2 of the 4 slots, with 4 more of its replies due');
    assert.equal(live.received[0]!.body.client, 'b');
  });

  it('two clients sending to one dead origin hold that origin’s share together, not a share each', async () => {
    const dead = await deadReceiver();
    const live = await startReceiver();
    receivers.push(live);
    await start({ deliveryConcurrency: 4, deliveryConcurrencyPerClient: 2, deliveryConcurrencyPerOrigin: 2, deliveryTimeoutMs: 10_000 });
    // Two paths of one receiver: one origin.
    h!.addClient('a1', { sendUrl: dead.url });
    h!.addClient('a2', { sendUrl: dead.url.replace('/hook', '/other') });
    h!.addClient('b', { sendUrl: live.url });
    await messages('a1', 3);
    await messages('a2', 3);
    h!.clock.advance(2000);
    await eventually(() => dead.received.length >= 2, "a1's and a2's deliveries under way");
    await messages('b', 1);
    h!.clock.advance(2000);
    await eventually(() => live.received.length === 1, "B's reply delivered");
    assert.equal(dead.received.length, 2, 'a1 and a2 together held the 2 slots of their origin, not 2 each');
  });

  it("with every slot held by dead receivers, B's reply takes the first slot that frees, ahead of their backlog", async () => {
    const timeoutMs = 1500;
    const deadOne = await deadReceiver();
    const deadTwo = await deadReceiver();
    const live = await startReceiver();
    receivers.push(live);
    await start({ deliveryConcurrency: 4, deliveryConcurrencyPerClient: 2, deliveryConcurrencyPerOrigin: 2, deliveryTimeoutMs: timeoutMs });
    h!.addClient('a1', { sendUrl: deadOne.url });
    h!.addClient('a2', { sendUrl: deadTwo.url });
    h!.addClient('b', { sendUrl: live.url });
    await messages('a1', 6);
    await messages('a2', 6);
    h!.clock.advance(2000);
    await eventually(() => deadOne.received.length + deadTwo.received.length === 4, 'all 4 slots held');
    let deadBefore = -1;
    live.respond = () => {
      deadBefore = deadOne.received.length + deadTwo.received.length;
      return { status: 200 };
    };
    await messages('b', 1);
    const due = Date.now();
    h!.clock.advance(2000);
    // Oldest first across all clients, B would wait for the 8 older replies of a1 and a2 too: 3 tries' time-outs.
    await eventually(() => live.received.length === 1, "B's reply delivered", 4 * timeoutMs);
    const waited = Date.now() - due;
    assert.ok(waited < timeoutMs + 1000, `B waited ${waited} ms: no more than one try's time-out (${timeoutMs} ms)`);
    assert.ok(deadBefore < 8, `B took one of the 4 slots that freed first (${deadBefore} tries of a1 and a2 before it), ahead of the 8 older replies still due`);
  });
});
