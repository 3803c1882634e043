import { test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock } from '../../shared/clock.ts';
import { createPgReadiness } from './pg-readiness.ts';

/** A database whose answers the test gives: each query waits for `answer` or `fail`. */
function fakeDb() {
  const waiting: Array<{ ok: () => void; fail: (e: Error) => void }> = [];
  return {
    queries: () => waiting.length,
    query: (): Promise<unknown> => new Promise<void>((ok, fail) => waiting.push({ ok, fail })),
    answer: () => waiting.shift()!.ok(),
    fail: (message: string) => waiting.shift()!.fail(new Error(message)),
  };
}

test('ready when the database answers; checks that arrive together share one query, and an answer holds for a second', async () => {
  const db = fakeDb();
  const clock = manualClock();
  const ready = createPgReadiness(db, clock);
  const [a, b] = [ready(), ready()];
  assert.equal(db.queries(), 1);
  db.answer();
  assert.deepEqual(await Promise.all([a, b]), [null, null]);
  clock.advance(999);
  assert.equal(await ready(), null);
  assert.equal(db.queries(), 0, 'the answer of a moment ago');
  clock.advance(1);
  const c = ready();
  assert.equal(db.queries(), 1, 'asked again after a second');
  db.fail('connect ECONNREFUSED 10.0.0.5:5432');
  assert.equal(await c, 'the database cannot be reached: connect ECONNREFUSED 10.0.0.5:5432');
});

test('a database that does not answer within 2 s is not ready, without waiting on the query', async () => {
  const db = fakeDb();
  const clock = manualClock();
  const ready = createPgReadiness(db, clock);
  const pending = ready();
  clock.advance(2000);
  assert.equal(await pending, 'the database did not answer within 2000 ms');
  db.answer();
  clock.advance(1000);
  const next = ready();
  db.answer();
  assert.equal(await next, null, 'ready again once it answers');
});
