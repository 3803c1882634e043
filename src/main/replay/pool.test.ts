import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runPool } from './pool.ts';

/** Work that finishes when the test says so, so how many run at once is exact. */
function gated() {
  const open: Array<() => void> = [];
  let running = 0;
  let most = 0;
  const started: number[] = [];
  return {
    started,
    get running() {
      return running;
    },
    get most() {
      return most;
    },
    work: (n: number) =>
      new Promise<void>((resolve) => {
        started.push(n);
        running++;
        most = Math.max(most, running);
        open.push(() => {
          running--;
          resolve();
        });
      }),
    async releaseAll(): Promise<void> {
      while (open.length > 0) open.shift()!();
      await new Promise((r) => setImmediate(r));
    },
    waiting: () => open.length,
  };
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setImmediate(r));
}

test('never more than the limit at once, and every item once, in order', async () => {
  const g = gated();
  const done = runPool([1, 2, 3, 4, 5], 2, new AbortController().signal, g.work);
  for (let i = 0; i < 3; i++) {
    await until(() => g.waiting() === 2 || g.started.length === 5);
    assert.ok(g.running <= 2);
    await g.releaseAll();
  }
  await done;
  assert.equal(g.most, 2);
  assert.deepEqual(g.started, [1, 2, 3, 4, 5]);
});

test('an abort starts nothing new', async () => {
  const g = gated();
  const controller = new AbortController();
  const done = runPool([1, 2, 3, 4], 1, controller.signal, g.work);
  await until(() => g.waiting() === 1);
  controller.abort();
  await g.releaseAll();
  await done;
  assert.deepEqual(g.started, [1]);
});
