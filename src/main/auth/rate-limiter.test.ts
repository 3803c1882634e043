import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRateLimiter } from './rate-limiter.ts';

test('allows a burst, then refills at the configured rate, with a Retry-After of at least one second', () => {
  const limiter = createRateLimiter({ perSecond: 100, burst: 200 });
  for (let i = 0; i < 200; i++) assert.ok(limiter.take('c', 0).allowed);
  const refused = limiter.take('c', 0);
  assert.deepEqual(refused, { allowed: false, retryAfterSeconds: 1 });
  assert.ok(limiter.take('other', 0).allowed, 'buckets are per client');
  assert.ok(limiter.take('c', 10).allowed, '10 ms refill one token at 100/s');
  assert.ok(!limiter.take('c', 10).allowed);
});

test('a slow rate reports a longer Retry-After', () => {
  const limiter = createRateLimiter({ perSecond: 0.25, burst: 1 });
  assert.ok(limiter.take('c', 0).allowed);
  assert.deepEqual(limiter.take('c', 0), { allowed: false, retryAfterSeconds: 4 });
});
