import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countAbove, DURATION_BUCKETS_SECONDS, emptyDurationHistogram, observeDuration } from './duration-histogram.ts';

test('observations land in every bucket whose bound they do not exceed', () => {
  const h = emptyDurationHistogram();
  for (const s of [0.0004, 0.001, 0.02, 0.3, 45]) observeDuration(h, s);
  assert.equal(h.count, 5);
  assert.ok(Math.abs(h.sum - 45.3214) < 1e-9);
  const at = (le: number): number => h.counts[DURATION_BUCKETS_SECONDS.indexOf(le as (typeof DURATION_BUCKETS_SECONDS)[number])]!;
  assert.equal(at(0.001), 2, 'a bound is inclusive');
  assert.equal(at(0.025), 3);
  assert.equal(at(0.5), 4);
  assert.equal(at(30), 4, '45 s is only in +Inf (the count)');
  assert.equal(countAbove(h, 0.01), 3);
  assert.deepEqual(h.counts, [...h.counts].sort((a, b) => a - b), 'cumulative');
});
