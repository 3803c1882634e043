import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from './migrate.ts';
import { MIGRATIONS } from './migrations/index.ts';
import { idempotencyQueries } from './idempotency.ts';

test('prune removes records older than the cut from the old end, at most a batch per call, and keeps the rest', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS);
  const q = idempotencyQueries(db);
  const put = (i: number, at: number) =>
    q.put({ clientId: 'a', eventType: 'auto_dialog', msgId: `m${i}`, contentHash: 'h', status: 200, body: '{}', conversationId: 'c', messageId: null, signature: `s${i}`, at });
  db.exec('BEGIN');
  for (let i = 0; i < 2500; i++) put(i, 1000 + i);
  for (let i = 2500; i < 2510; i++) put(i, 10_000);
  db.exec('COMMIT');
  const plan = (db.prepare('EXPLAIN QUERY PLAN SELECT id FROM idempotency INDEXED BY idempotency_created WHERE created_at < 5000 LIMIT 1000').all() as Array<{ detail: string }>)
    .map((r) => r.detail).join(' ');
  assert.match(plan, /COVERING INDEX idempotency_created/);
  assert.equal(q.needsPrune(10_000), true);
  assert.deepEqual([q.prune(10_000, 1000), q.prune(10_000, 1000), q.prune(10_000, 1000), q.prune(10_000, 1000)], [1000, 1000, 500, 0]);
  assert.equal(q.needsPrune(10_000), false);
  assert.equal(q.get('a', 'auto_dialog', 'm0'), undefined);
  assert.equal(q.get('a', 'auto_dialog', 'm2509')?.status, 200);
  assert.equal(q.signaturesSince(0).length, 10);
});
