import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from './db.ts';
import { createStore, type Store } from './index.ts';
import { executeWrite } from '../conversations/write-commands.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';

const ANN = { id: 'ann', name: 'Ann Lee' };

/** A store in a real SQLite file; conversations c1 and c2; `add` makes a reply and its delivery. */
function seeded(t: { after: (fn: () => void) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'sb-delivery-actions-'));
  const store = createStore(openDatabase(join(dir, 'switchboard.db')));
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  store.clients.create('a', DEFAULT_CLIENT_SETTINGS, 0);
  for (const c of ['c1', 'c2']) store.conversations.create({ id: c, clientId: 'a', channel: 'im', peer: `u:${c}`, groupId: null, customerId: c, autoReply: 'active', now: 0 });
  const add = (conv: string, at: number): number => {
    const replyId = store.messages.insertReply({ conversationId: conv, kind: 'auto', msgId: `r${Math.random()}`, replyTo: [], afterMessageId: 0, content: 'x', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: at });
    return store.deliveries.insert({ replyId, replyMsgId: `r${replyId}`, conversationId: conv, clientId: 'a', sendUrl: 'http://127.0.0.1:9/', messageInfo: '{}', state: 'pending', nextAttemptAt: at, createdAt: at });
  };
  /** One failed attempt: retrying until `next`, or dead. */
  const fail = (id: number, at: number, next: number | 'dead'): void => {
    const d = store.deliveries.get(id)!;
    const state = next === 'dead' ? 'dead' : 'pending';
    store.deliveries.recordAttempt({ deliveryId: id, attempt: d.attempts + 1, startedAt: at, durationMs: 1, status: 500, error: 'HTTP 500', outcome: state === 'dead' ? 'dead' : 'retry', state, nextAttemptAt: next === 'dead' ? at : next, now: at });
  };
  return { store, add, fail };
}

const cancel = (store: Store, deliveryId: number, now: number) =>
  executeWrite(store, {
    kind: 'delivery_cancel',
    deliveryId,
    reason: `cancelled by ${ANN.name} from the console`,
    now,
    audit: { at: now, operator: ANN, action: 'cancel', conversationId: store.deliveries.get(deliveryId)?.conversationId ?? null, detail: `{"delivery":${deliveryId}}` },
  });

test("the console's Cancel takes a retrying or a dead delivery, names the operator, is audited, and lets the conversation's next delivery go", async (t) => {
  const { store, add, fail } = seeded(t);
  const retrying = add('c1', 10);
  const behind = add('c1', 11);
  const dead = add('c2', 12);
  fail(retrying, 20, 5_000);
  fail(dead, 20, 'dead');
  assert.deepEqual(store.deliveries.due(100, 10).map((d) => d.id), [], 'c1 waits for its retry; behind it, the next one');
  assert.deepEqual(await cancel(store, retrying, 30), { kind: 'changed', count: 1 });
  assert.deepEqual(await cancel(store, dead, 31), { kind: 'changed', count: 1 });
  for (const id of [retrying, dead]) {
    const d = store.deliveries.get(id)!;
    assert.deepEqual([d.state, d.lastError, d.attempts], ['cancelled', 'cancelled by Ann Lee from the console', 1]);
  }
  assert.deepEqual(store.deliveries.due(100, 10).map((d) => d.id), [behind], 'the next reply of c1 no longer waits');
  assert.deepEqual(
    store.audit.list(undefined, 10).map((a) => [a.action, a.operator.name, a.conversationId]),
    [['cancel', 'Ann Lee', 'c2'], ['cancel', 'Ann Lee', 'c1']],
  );
});

test("the console's Cancel leaves a delivery never tried, a sent one and a cancelled one as they are, and audits nothing", async (t) => {
  const { store, add } = seeded(t);
  const fresh = add('c1', 10);
  const sent = add('c2', 10);
  const stopped = add('c2', 11);
  store.deliveries.recordAttempt({ deliveryId: sent, attempt: 1, startedAt: 10, durationMs: 1, status: 200, error: null, outcome: 'sent', state: 'sent', nextAttemptAt: 10, now: 10 });
  store.deliveries.cancel(stopped, 'auto-reply stopped when the delivery was due', 10);
  for (const id of [fresh, sent, stopped]) assert.deepEqual(await cancel(store, id, 20), { kind: 'changed', count: 0 });
  assert.deepEqual([store.deliveries.get(fresh)!.state, store.deliveries.get(sent)!.state], ['pending', 'sent']);
  assert.equal(store.deliveries.get(stopped)!.lastError, 'auto-reply stopped when the delivery was due', 'why it was cancelled is kept');
  assert.deepEqual(store.audit.list(undefined, 10), []);
});

test('Retry now makes a retrying delivery due at once, keeping its schedule; one already due still counts', async (t) => {
  const { store, add, fail } = seeded(t);
  const first = add('c1', 10);
  const second = add('c1', 11);
  fail(first, 20, 300_000);
  fail(first, 300_000, 2_100_000);
  assert.deepEqual(await executeWrite(store, { kind: 'delivery_retry', deliveryId: first, now: 400_000 }), { kind: 'changed', count: 1 });
  const d = store.deliveries.get(first)!;
  assert.deepEqual([d.state, d.nextAttemptAt, d.roundAttempts, d.attempts], ['pending', 400_000, 1, 2], 'an extra try: if it fails, the wait after it is the step it was waiting out');
  assert.deepEqual(store.deliveries.due(400_000, 10).map((x) => x.id), [first]);
  // Due already (taken by the outbox, or waiting its turn): pressing it again is not an error.
  assert.deepEqual(await executeWrite(store, { kind: 'delivery_retry', deliveryId: first, now: 400_500 }), { kind: 'changed', count: 1 });
  assert.equal(store.deliveries.get(first)!.nextAttemptAt, 400_000, 'an earlier due time is kept');
  assert.deepEqual(await executeWrite(store, { kind: 'delivery_retry', deliveryId: second, now: 400_500 }), { kind: 'changed', count: 0 }, 'never tried: nothing to retry');
});

test("the transcript says when a retrying delivery is tried next, and what a later one of the conversation waits behind", async (t) => {
  const { store, add, fail } = seeded(t);
  const first = add('c1', 10);
  const second = add('c1', 11);
  const delivery = (id: number) => store.console.transcript('c1', 50).find((e) => e.delivery?.id === id)!.delivery!;
  assert.deepEqual(delivery(first), { id: first, state: 'pending', attempts: 0, lastError: null, nextAttemptAt: 10, behind: null });
  assert.deepEqual(delivery(second).behind, { id: first, failing: false, nextAttemptAt: 10 }, 'behind one being sent');
  fail(first, 20, 1_800_000);
  assert.deepEqual(delivery(first), { id: first, state: 'pending', attempts: 1, lastError: 'HTTP 500', nextAttemptAt: 1_800_000, behind: null });
  assert.deepEqual(delivery(second).behind, { id: first, failing: true, nextAttemptAt: 1_800_000 }, 'behind one failing, with its next try');
  fail(first, 1_800_000, 'dead');
  assert.deepEqual(delivery(first), { id: first, state: 'dead', attempts: 2, lastError: 'HTTP 500' }, 'a dead one holds nothing back');
  assert.deepEqual(delivery(second).behind, null);
});
