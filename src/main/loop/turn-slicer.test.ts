import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTurnSlicer } from './turn-slicer.ts';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A budget clock where every reading costs 1 ms: each task "takes" about a millisecond. */
function tickingClock() {
  let t = 0;
  return () => t++;
}

test('a burst runs a few tasks per turn, in order, and yields between slices', async () => {
  const slicer = createTurnSlicer({ budgetMs: 2, now: tickingClock() });
  const ran: Array<[number, number]> = [];
  let turn = 0;
  for (let i = 0; i < 10; i++) slicer.run(() => ran.push([i, turn]));
  assert.equal(ran.length, 0, 'nothing runs in the turn that queued it');
  while (slicer.pending() > 0) {
    await nextTurn();
    turn++;
  }
  assert.deepEqual(ran.map(([i]) => i), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'every task, in the order queued');
  const turns = new Set(ran.map(([, t]) => t));
  assert.ok(turns.size >= 4, `spread over several turns (${turns.size})`);
  for (const t of turns) assert.ok(ran.filter(([, u]) => u === t).length <= 2, 'at most the budget per turn');
});

test('a task costing more than the budget still runs, one per turn', async () => {
  let t = 0;
  const slicer = createTurnSlicer({ budgetMs: 2, now: () => (t += 5) });
  const ran: number[] = [];
  for (let i = 0; i < 3; i++) slicer.run(() => ran.push(i));
  await nextTurn();
  assert.deepEqual(ran, [0]);
  await nextTurn();
  await nextTurn();
  assert.deepEqual(ran, [0, 1, 2]);
});

test('a cancelled task never runs; a throwing one does not stop the rest', async () => {
  const errors: unknown[] = [];
  const slicer = createTurnSlicer({ onError: (e) => errors.push(e) });
  const ran: string[] = [];
  slicer.run(() => {
    throw new Error('boom');
  });
  const cancel = slicer.run(() => ran.push('cancelled'));
  slicer.run(() => ran.push('kept'));
  cancel();
  assert.equal(slicer.pending(), 2);
  while (slicer.pending() > 0) await nextTurn();
  assert.deepEqual(ran, ['kept']);
  assert.equal(errors.length, 1);
});

test("'first' tasks run before the 'normal' ones already waiting, each lane in its own order", async () => {
  const slicer = createTurnSlicer({ budgetMs: 2, now: tickingClock() });
  const ran: string[] = [];
  for (let i = 0; i < 4; i++) slicer.run(() => ran.push(`n${i}`));
  await nextTurn();
  slicer.run(() => ran.push('f0'), 'first');
  const cancel = slicer.run(() => ran.push('f-cancelled'), 'first');
  slicer.run(() => ran.push('f1'), 'first');
  cancel();
  assert.equal(slicer.pending(), 4, 'two normal and two first tasks left');
  while (slicer.pending() > 0) await nextTurn();
  assert.deepEqual(ran, ['n0', 'n1', 'f0', 'f1', 'n2', 'n3']);
});

test("a steady stream of 'first' tasks never starves the 'normal' lane: each slice runs at least one", async () => {
  const slicer = createTurnSlicer({ budgetMs: 2, now: tickingClock() });
  const ran: string[] = [];
  let turn = 0;
  // Each 'first' task queues another, as deliveries freeing slots take the next ones.
  const refill = (): void => {
    ran.push(`f@${turn}`);
    if (turn < 5) slicer.run(refill, 'first');
  };
  for (let i = 0; i < 4; i++) slicer.run(refill, 'first');
  slicer.run(() => ran.push(`n@${turn}`));
  slicer.run(() => ran.push(`n@${turn}`));
  await nextTurn();
  turn++;
  await nextTurn();
  turn++;
  assert.deepEqual(ran.filter((r) => r.startsWith('n')), ['n@0', 'n@1'], 'one normal task in each of the first two slices');
  while (slicer.pending() > 0) {
    await nextTurn();
    turn++;
  }
});
