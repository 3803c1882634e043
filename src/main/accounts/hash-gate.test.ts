import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHashGate, HashBusy } from './hash-gate.ts';

test('at most `concurrent` hashes run at once, the rest wait their turn, and beyond the queue a sign-in is refused as busy', async () => {
  const gate = createHashGate(2, 3);
  const releases: Array<() => void> = [];
  let peak = 0;
  let live = 0;
  const work = () =>
    gate.run(async () => {
      live++;
      peak = Math.max(peak, live);
      await new Promise<void>((r) => releases.push(r));
      live--;
      return 'done';
    });
  const runs = Array.from({ length: 5 }, work);
  await assert.rejects(work(), HashBusy, 'a sixth: two running, three waiting, no room');
  assert.deepEqual([gate.running, gate.waiting], [2, 3]);
  while (releases.length || gate.running) {
    releases.shift()?.();
    await new Promise((r) => setImmediate(r));
  }
  assert.deepEqual(await Promise.all(runs), ['done', 'done', 'done', 'done', 'done']);
  assert.equal(peak, 2);
  assert.deepEqual([gate.running, gate.waiting], [0, 0]);
});
