import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { openDatabase } from './db.ts';
import { createWriteQueue } from './write-queue.ts';

function setup() {
  const path = join(mkdtempSync(join(tmpdir(), 'sb-wq-')), 'q.db');
  const db = openDatabase(path);
  db.exec('CREATE TABLE t (v INTEGER UNIQUE)');
  return { db, path, queue: createWriteQueue(db), insert: db.prepare('INSERT INTO t (v) VALUES (?)') };
}

test('ops queued in one turn share one transaction, and each resolves with its own result', async () => {
  const { queue, insert, path } = setup();
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => queue.run(() => Number(insert.run(i).lastInsertRowid))));
  assert.equal(results.length, 50);
  assert.equal(queue.stats.batches, 1);
  assert.equal(queue.stats.largestBatch, 50);
  const other = new DatabaseSync(path);
  assert.equal((other.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n, 50, 'committed and visible to another connection');
});

test('an op that throws is rolled back alone; the rest of its batch commits', async () => {
  const { queue, insert, db } = setup();
  const outcomes = await Promise.allSettled([
    queue.run(() => insert.run(1)),
    queue.run(() => {
      insert.run(2);
      insert.run(1); // UNIQUE violation: this op's insert of 2 must vanish too
    }),
    queue.run(() => insert.run(3)),
  ]);
  assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
  assert.deepEqual((db.prepare('SELECT v FROM t ORDER BY v').all() as Array<{ v: number }>).map((r) => r.v), [1, 3]);
});

test('read-decide-write inside an op is atomic across concurrent callers', async () => {
  const { queue, db } = setup();
  const exists = db.prepare('SELECT 1 FROM t WHERE v = 7');
  const ins = db.prepare('INSERT INTO t (v) VALUES (7)');
  const created = await Promise.all(Array.from({ length: 10 }, () => queue.run(() => (exists.get() ? false : (ins.run(), true)))));
  assert.equal(created.filter(Boolean).length, 1);
});

test('drain waits for queued fire-and-forget writes', async () => {
  const { queue, insert, db } = setup();
  for (let i = 0; i < 5; i++) queue.fireAndForget(() => void insert.run(i));
  await queue.drain();
  assert.equal((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n, 5);
});
