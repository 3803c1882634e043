import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSignInThrottle } from './sign-in-throttle.ts';

const MIN = 60_000;

test('five failures for one account in 15 minutes refuse the sixth attempt, from any address, until the first failure is 15 minutes old', () => {
  const t = createSignInThrottle();
  for (let i = 0; i < 5; i++) {
    assert.deepEqual(t.check('ann', `10.0.0.${i}`, i * MIN), { allowed: true });
    t.fail('ann', `10.0.0.${i}`, i * MIN);
  }
  assert.deepEqual(t.check('ann', '10.9.9.9', 5 * MIN), { allowed: false, retryAfterSeconds: 600, by: 'account' });
  assert.deepEqual(t.check('ANN', '10.9.9.9', 5 * MIN), { allowed: false, retryAfterSeconds: 600, by: 'account' }, 'the id is matched as sign-in matches it');
  assert.deepEqual(t.check('omar', '10.9.9.9', 5 * MIN), { allowed: true }, 'another account is not held up');
  assert.deepEqual(t.check('ann', '10.9.9.9', 15 * MIN), { allowed: true }, 'the oldest failure has left the window');
});

test('one address guessing across many accounts is refused after 20 failures, and an unknown account counts as a known one', () => {
  const t = createSignInThrottle();
  for (let i = 0; i < 20; i++) t.fail(`nobody-${i}`, '203.0.113.7', i * 1000);
  const d = t.check('ann', '203.0.113.7', 20_000);
  assert.equal(d.allowed, false);
  assert.equal(!d.allowed && d.by, 'address');
  assert.deepEqual(t.check('ann', '203.0.113.8', 20_000), { allowed: true });
});

test('a right password clears the account\'s failures; memory stays bounded', () => {
  const t = createSignInThrottle({ perAccount: 5, perAddress: 20, windowMs: 15 * MIN, maxKeys: 100 });
  for (let i = 0; i < 4; i++) t.fail('ann', '10.0.0.1', i);
  t.succeed('ann');
  for (let i = 0; i < 4; i++) t.fail('ann', '10.0.0.2', 10 + i);
  assert.deepEqual(t.check('ann', '10.0.0.3', 20), { allowed: true });
  for (let i = 0; i < 1000; i++) t.fail(`x${i}`, `192.0.2.${i % 250}`, 100 + i);
  assert.ok(t.size <= 100, `${t.size} keys kept`);
});
