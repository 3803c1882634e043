import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSecretKey } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../store/db.ts';
import { createStore, type Store } from '../store/index.ts';
import { executeWrite, type WriteCommand, type WriteResult } from '../conversations/write-commands.ts';
import type { MessageWriter } from '../conversations/message-service.ts';
import type { TurnSlicer } from '../loop/turn-slicer.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';
import { manualClock } from '../../shared/clock.ts';
import { createOutbox, type Outbox } from './outbox.ts';
import type { SendResult } from './retry-policy.ts';
import { emptyWriteStats } from '../store/write-queue.ts';

const ANN = { id: 'ann', name: 'Ann Lee' };

/**
 * Resolves once the outbox has nothing in motion but what the test holds itself (`parked`: records
 * held by the writer, requests held by the receiver, attempts queued in a hand-run slicer): no scan
 * asked for, every other delivery taken has been recorded. Waits on the outbox's own count, a turn
 * at a time, rather than for a fixed number of turns; fails if it never gets there.
 */
async function outboxIdle(outbox: Outbox, parked: () => number = () => 0): Promise<void> {
  for (let turn = 0; outbox.busy() > parked() || turn === 0; turn++) {
    if (turn > 10_000) throw new Error(`the outbox is still busy: ${outbox.busy()} in motion, ${parked()} held by the test`);
    await new Promise((r) => setImmediate(r));
  }
}

/**
 * An outbox over a real SQLite file, a receiver that answers what `answer` says, and a slicer the
 * test runs by hand: between the outbox taking a delivery and starting its attempt, the test can
 * act as a console would.
 */
function setup(t: { after: (fn: () => void) => void }, answer: (content: string) => number | Promise<number>) {
  const dir = mkdtempSync(join(tmpdir(), 'sb-outbox-cancel-'));
  const store = createStore(openDatabase(join(dir, 'switchboard.db')));
  const clock = manualClock();
  const queued: Array<() => void> = [];
  const slicer: TurnSlicer = { run: (task) => (queued.push(task), () => {}), pending: () => queued.length };
  const writer = {
    submit: (command: WriteCommand): Promise<WriteResult> => new Promise((resolve) => queueMicrotask(() => resolve(executeWrite(store, command)))),
    send() {},
    drain: () => Promise.resolve(),
    close: () => Promise.resolve(),
    stats: emptyWriteStats(),
  } satisfies MessageWriter;
  const sent: string[] = [];
  const send = async (d: { body: string }): Promise<SendResult> => {
    const content = String((JSON.parse(d.body) as { message_info: { content: string } }).message_info.content);
    sent.push(content);
    return { kind: 'response', status: await answer(content), retryAfter: null };
  };
  const client = { id: 'a', enabled: true, settings: DEFAULT_CLIENT_SETTINGS, keys: [createSecretKey(Buffer.from('s'.repeat(32)))] };
  const outbox = createOutbox({ store, writer, send, clock, lookupClient: () => client, concurrency: 4, pollMs: 1000, slicer, random: () => 0.5, log: () => {} });
  store.clients.create('a', DEFAULT_CLIENT_SETTINGS, 0);
  store.conversations.create({ id: 'c1', clientId: 'a', channel: 'im', peer: 'u:c1', groupId: null, customerId: 'c1', autoReply: 'active', now: 0 });
  const add = (content: string): number => {
    const msgId = `reply-${content}`;
    const info = { msg_id: msgId, reply_to: ['m'], conversation_id: 'c1', to_user_id: 'c1', content, message_type: 1, event_type: 'auto_dialog', from_user_type: 4, create_timestamp: 0 };
    const replyId = store.messages.insertReply({ conversationId: 'c1', kind: 'auto', msgId, replyTo: ['m'], afterMessageId: 0, content, handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: clock.now() });
    return store.deliveries.insert({ replyId, replyMsgId: msgId, conversationId: 'c1', clientId: 'a', sendUrl: 'http://receiver.test/hook', messageInfo: JSON.stringify(info), state: 'pending', nextAttemptAt: clock.now(), createdAt: clock.now() });
  };
  /** Runs every attempt the outbox has taken, and what follows from them. */
  const run = async (): Promise<void> => {
    for (let i = 0; i < 10 && queued.length; i++) {
      for (const task of queued.splice(0)) task();
      await outboxIdle(outbox, () => queued.length);
    }
  };
  t.after(async () => {
    await outbox.stop();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  /** Lets the outbox take what it takes now (the clock not moved); taken attempts wait in `queued` for `run`. */
  const idle = (): Promise<void> => outboxIdle(outbox, () => queued.length);
  return { store, clock, outbox, add, run, idle, sent, queued };
}

const cancelFromConsole = (store: Store, deliveryId: number, now: number) =>
  executeWrite(store, {
    kind: 'delivery_cancel',
    deliveryId,
    reason: `cancelled by ${ANN.name} from the console`,
    now,
    audit: { at: now, operator: ANN, action: 'cancel', conversationId: 'c1', detail: null },
  });

test('a retrying delivery cancelled after the outbox took it, before its attempt started, is never sent; the next reply goes', async (t) => {
  const o = setup(t, (content) => (content === 'first' ? 500 : 200));
  const first = o.add('first');
  const second = o.add('second');
  o.outbox.start();
  await o.idle();
  await o.run();
  assert.deepEqual(o.sent, ['first'], 'the first try failed; the second reply waits behind it');
  assert.equal(o.store.deliveries.get(first)!.nextAttemptAt, o.clock.now() + 5_000);
  o.clock.advance(5_000);
  await o.idle();
  assert.equal(o.queued.length, 1, 'the retry is taken, its attempt not started yet');
  assert.deepEqual(await cancelFromConsole(o.store, first, o.clock.now()), { kind: 'changed', count: 1 });
  o.outbox.notify();
  await o.idle();
  await o.run();
  assert.deepEqual(o.sent, ['first', 'second'], 'the cancelled one is never sent again; the one behind it went');
  const d = o.store.deliveries.get(first)!;
  assert.deepEqual([d.state, d.attempts, d.lastError], ['cancelled', 1, 'cancelled by Ann Lee from the console']);
  assert.equal(o.store.deliveries.attempts(first).length, 1, 'no attempt recorded after the cancel');
  assert.equal(o.store.deliveries.get(second)!.state, 'sent');
  // Nothing brings it back: polls and wake-ups later, it stays as it is.
  o.clock.advance(3_600_000);
  o.outbox.notify();
  await o.idle();
  await o.run();
  assert.deepEqual(o.sent, ['first', 'second']);
});

test('Retry now: a retrying delivery goes at once as an extra try; if it fails, the wait is the step it was waiting out, and the schedule then goes on', async (t) => {
  const o = setup(t, () => 503);
  const id = o.add('hello');
  o.outbox.start();
  await o.idle();
  await o.run();
  o.clock.advance(5_000);
  await o.idle();
  await o.run();
  const before = o.store.deliveries.get(id)!;
  assert.deepEqual([before.attempts, before.nextAttemptAt - o.clock.now()], [2, 300_000], 'two failed: next try in 5 min');
  o.clock.advance(60_000);
  assert.deepEqual(await executeWrite(o.store, { kind: 'delivery_retry', deliveryId: id, now: o.clock.now() }), { kind: 'changed', count: 1 });
  o.outbox.notify();
  await o.idle();
  await o.run();
  assert.equal(o.sent.length, 3, 'tried at once, 4 minutes early');
  const after = o.store.deliveries.get(id)!;
  assert.deepEqual([after.state, after.attempts, after.nextAttemptAt - o.clock.now()], ['pending', 3, 300_000], 'the early try failed: next try in 5 min again, not 30');
  o.clock.advance(300_000);
  await o.idle();
  await o.run();
  const later = o.store.deliveries.get(id)!;
  assert.deepEqual([later.attempts, later.nextAttemptAt - o.clock.now()], [4, 1_800_000], 'the scheduled try failed: the schedule goes on');
});

test('Cancel while the attempt is on the wire, which the receiver then accepts: the reply is sent (the customer has it), and that attempt is recorded', async (t) => {
  let cancelDuringRequest = false;
  const o = setup(t, async (content) => {
    if (!cancelDuringRequest) return 500;
    // The operator's Cancel commits while this request is in flight; the receiver then takes it.
    assert.deepEqual(await cancelFromConsole(o.store, id, o.clock.now()), { kind: 'changed', count: 1 });
    return content === 'first' ? 200 : 500;
  });
  const id = o.add('first');
  o.outbox.start();
  await o.idle();
  await o.run();
  cancelDuringRequest = true;
  o.clock.advance(5_000);
  await o.idle();
  await o.run();
  assert.deepEqual(o.sent, ['first', 'first']);
  const d = o.store.deliveries.get(id)!;
  assert.deepEqual([d.state, d.lastStatus, d.lastError], ['sent', 200, null], 'sent: "cancelled, not sent" would be untrue, and an Undo of a stop must not send it again');
  assert.deepEqual(
    o.store.deliveries.attempts(id).map((a) => [a.attempt, a.status, a.outcome]),
    [
      [1, 500, 'retry'],
      [2, 200, 'sent'],
    ],
    'the second request reached the receiver: the customer has it, and the trace says so',
  );
  assert.equal(d.attempts, 2);
});
