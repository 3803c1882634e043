import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DUE_SQL } from './deliveries.ts';
import { seededDeliveries } from './deliveries.fixture.ts';

const seeded = seededDeliveries;

test('due deliveries: only the oldest pending one per conversation, oldest due first', () => {
  const { store, add } = seeded();
  const a1 = add('c1', 10);
  add('c1', 5);
  const b1 = add('c2', 20);
  assert.deepEqual(store.deliveries.due(100, 10).map((d) => d.id), [a1, b1]);
  assert.deepEqual(store.deliveries.due(15, 10).map((d) => d.id), [a1], 'not yet due');
  store.deliveries.recordAttempt({ deliveryId: a1, attempt: 1, startedAt: 0, durationMs: 1, status: 200, error: null, outcome: 'sent', state: 'sent', nextAttemptAt: 0, now: 0 });
  assert.equal(store.deliveries.due(100, 10).length, 2, 'the next one of c1 is free to go');
});

test('the due query uses its indexes: no scan and no sort of all pending deliveries', () => {
  const { store } = seeded();
  const plan = (store.connection.prepare(`EXPLAIN QUERY PLAN ${DUE_SQL}`).all(1, 1) as Array<{ detail: string }>).map((r) => r.detail);
  assert.ok(plan.some((p) => p.includes('deliveries_due')), plan.join('\n'));
  assert.ok(plan.some((p) => p.includes('deliveries_pending')), plan.join('\n'));
  assert.ok(!plan.some((p) => /TEMP B-TREE|^SCAN/.test(p)), plan.join('\n'));
});

test('the problems list shows cancelled deliveries on request, newest first, with why they were cancelled and their send_url', () => {
  const { store, add } = seeded();
  const a = add('c1', 10);
  const b = add('c2', 20);
  add('c2', 30); // still pending, never tried: not a problem, not cancelled
  store.deliveries.cancelForConversation('c1', 'auto-reply stopped by the console', 40);
  store.deliveries.cancel(b, 'auto-reply paused when the delivery was due', 50);
  assert.deepEqual(store.deliveries.problems(['retrying', 'dead'], null, 10), [], 'not unless asked for');
  const rows = store.deliveries.problems(['cancelled'], null, 10);
  assert.deepEqual(rows.map((r) => [r.id, r.problem, r.lastError, r.sendUrl]), [
    [b, 'cancelled', 'auto-reply paused when the delivery was due', 'http://127.0.0.1:9/'],
    [a, 'cancelled', 'auto-reply stopped by the console', 'http://127.0.0.1:9/'],
  ]);
  assert.deepEqual(store.deliveries.problems(['cancelled'], 'nobody', 10), []);
  const plan = (store.connection.prepare(`EXPLAIN QUERY PLAN SELECT d.* FROM deliveries d INDEXED BY deliveries_cancelled WHERE d.state = 'cancelled' ORDER BY d.updated_at DESC, d.id DESC LIMIT 5`).all() as Array<{ detail: string }>).map((r) => r.detail);
  assert.ok(plan.some((p) => p.includes('deliveries_cancelled')), plan.join('\n'));
});
