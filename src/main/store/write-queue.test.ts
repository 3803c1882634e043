import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { openDatabase } from './db.ts';
import { BATCH_BUDGET_MS, createWriteQueue, type WriteQueueOptions } from './write-queue.ts';
import { countAbove } from '../../shared/duration-histogram.ts';

function setup(options: WriteQueueOptions = {}) {
  const path = join(mkdtempSync(join(tmpdir(), 'sb-wq-')), 'q.db');
  const db = openDatabase(path);
  db.exec('CREATE TABLE t (v INTEGER UNIQUE)');
  return { db, path, queue: createWriteQueue(db, undefined, options), insert: db.prepare('INSERT INTO t (v) VALUES (?)') };
}

test('ops queued in one turn share one transaction, and each resolves with its own result', async () => {
  // A clock that stands still: this is about batching, and a preempted thread must not split the batch by the time budget.
  const { queue, insert, path } = setup({ now: () => 0 });
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

test('an async op runs to its end before the next starts, even when it waits on something outside; one that rejects is rolled back alone', async () => {
  // Commands written against the store contract are async: on PostgreSQL their awaits are real.
  const { queue, insert, db } = setup({ now: () => 0 });
  const order: string[] = [];
  let release!: () => void;
  const outside = new Promise<void>((r) => (release = r));
  const slow = queue.run(async () => {
    order.push('slow: start');
    insert.run(1);
    await outside;
    insert.run(2);
    order.push('slow: end');
    return 'slow';
  });
  const failing = queue.run(async () => {
    order.push('failing');
    insert.run(3);
    await Promise.resolve();
    insert.run(1); // UNIQUE violation: its insert of 3 must vanish too
  });
  const quick = queue.run(() => (order.push('quick'), insert.run(4), 'quick'));
  // A turn later, with the slow op still waiting: an op queued now must wait for the batch, not run inside the slow op's await.
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  const later = queue.run(() => (order.push('later'), insert.run(5), 'later'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ['slow: start'], 'nothing else ran while the first op waited');
  release();
  const outcomes = await Promise.allSettled([slow, failing, quick, later]);
  assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
  assert.deepEqual(order, ['slow: start', 'slow: end', 'failing', 'quick', 'later']);
  assert.deepEqual((db.prepare('SELECT v FROM t ORDER BY v').all() as Array<{ v: number }>).map((r) => r.v), [1, 2, 4, 5]);
});

test('drain waits for queued fire-and-forget writes', async () => {
  const { queue, insert, db } = setup();
  for (let i = 0; i < 5; i++) queue.fireAndForget(() => void insert.run(i));
  await queue.drain();
  assert.equal((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n, 5);
});

test('a batch that has taken its work budget commits, and its callers are answered before the rest is applied', async () => {
  let clock = 0; // a fake time source: only the slow command moves it
  const { queue, insert, path } = setup({ now: () => clock });
  const other = new DatabaseSync(path);
  const committed = (): number[] => (other.prepare('SELECT v FROM t ORDER BY v').all() as Array<{ v: number }>).map((r) => r.v);
  const answered: number[] = [];
  const seenByLate: Array<{ answered: number[]; committed: number[] }> = [];
  const job = (v: number, cost: number) =>
    queue.run(() => {
      if (v >= 3) seenByLate.push({ answered: [...answered], committed: committed() });
      insert.run(v);
      clock += cost;
      return v;
    }).then((value) => answered.push(value));
  await Promise.all([job(1, 0), job(2, BATCH_BUDGET_MS + 10), job(3, 0), job(4, 0)]);
  assert.deepEqual(answered, [1, 2, 3, 4]);
  assert.equal(queue.stats.batches, 2, 'split after the slow command');
  assert.deepEqual(seenByLate[0], { answered: [1, 2], committed: [1, 2] }, 'the early callers were committed and answered first');
  assert.deepEqual(committed(), [1, 2, 3, 4]);
});

test('a batch within its work budget stays one transaction', async () => {
  let clock = 0;
  const { queue, insert } = setup({ now: () => clock });
  await Promise.all(Array.from({ length: 20 }, (_, i) => queue.run(() => { insert.run(i); clock += (BATCH_BUDGET_MS - 1) / 20; })));
  assert.equal(queue.stats.batches, 1);
});

test('stats time each COMMIT alone, into cumulative buckets', async () => {
  // Inside a transaction every reading of the clock moves it 100 ms on, and the search flush before
  // COMMIT 1 s; the COMMIT itself is 30 ms. Only a timer around the COMMIT alone records 30 ms.
  const opened: { db?: DatabaseSync } = {};
  let t = 0;
  const { queue, insert, db } = setup({
    now: () => (opened.db?.isTransaction ? (t += 100) : t + 30),
    budgetMs: 1e9,
    beforeCommit: () => void (t += 1000),
  });
  opened.db = db;
  await Promise.all([queue.run(() => insert.run(1)), queue.run(() => insert.run(2))]);
  await queue.run(() => insert.run(3));
  const h = queue.stats.commitSeconds;
  assert.equal(h.count, 2, 'one observation per transaction');
  assert.equal(queue.stats.batches, 2);
  assert.ok(Math.abs(h.sum - 0.06) < 1e-9, `sum ${h.sum}: jobs or the flush before COMMIT were timed too`);
  assert.equal(countAbove(h, 0.025), 2, 'both over 25 ms');
  assert.equal(countAbove(h, 0.05), 0, 'neither over 50 ms');
});
