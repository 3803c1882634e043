import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classify, nextDelay, parseRetryAfter, RETRY_SCHEDULE_MS } from './retry-policy.ts';

test('2xx is sent; 3xx, 408, 429, 5xx and network errors retry; other 4xx are dead at once', () => {
  const r = (status: number) => classify({ kind: 'response', status, retryAfter: null });
  for (const s of [200, 201, 204, 299]) assert.equal(r(s), 'sent', String(s));
  for (const s of [301, 302, 307, 308, 408, 429, 500, 502, 503, 504]) assert.equal(r(s), 'retry', String(s));
  for (const s of [400, 401, 403, 404, 409, 410, 413, 422]) assert.equal(r(s), 'dead', String(s));
  assert.equal(classify({ kind: 'error', error: 'ECONNREFUSED', permanent: false }), 'retry');
  assert.equal(classify({ kind: 'error', error: 'metadata', permanent: true }), 'dead');
});

test('the schedule is 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h with ±20 % jitter, then dead', () => {
  assert.deepEqual([...RETRY_SCHEDULE_MS], [5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 36e6]);
  RETRY_SCHEDULE_MS.forEach((base, i) => {
    assert.equal(nextDelay(i + 1, null, () => 0), Math.round(base * 0.8));
    assert.equal(nextDelay(i + 1, null, () => 1), Math.round(base * 1.2));
    assert.equal(nextDelay(i + 1, null, () => 0.5), base);
  });
  assert.equal(nextDelay(8, null), null, 'the eighth failure is final');
});

test('Retry-After up to an hour replaces the scheduled wait, in seconds or as a date', () => {
  const now = Date.UTC(2026, 0, 1);
  assert.equal(parseRetryAfter('120', now), 120_000);
  assert.equal(parseRetryAfter(new Date(now + 90_000).toUTCString(), now), 90_000);
  assert.equal(parseRetryAfter('3600', now), 3_600_000);
  assert.equal(parseRetryAfter('3601', now), null, 'over an hour: the schedule applies');
  assert.equal(parseRetryAfter('soon', now), null);
  assert.equal(parseRetryAfter(null, now), null);
  assert.equal(nextDelay(1, 120_000), 120_000);
  assert.equal(nextDelay(8, 120_000), null, 'Retry-After does not extend a used-up schedule');
});
