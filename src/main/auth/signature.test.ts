import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { hmacKey, sign, signingString, verify } from './signature.ts';

test('signs timestamp.client.JCS(message_info) with HMAC-SHA256 as lowercase hex', () => {
  const data = signingString(1763715600, 'acme', '{"content":"hi","event_type":"auto_dialog"}');
  assert.equal(data, '1763715600.acme.{"content":"hi","event_type":"auto_dialog"}');
  const expected = createHmac('sha256', 'the-secret').update(data).digest('hex');
  assert.equal(sign(hmacKey('the-secret'), data), expected);
  assert.match(expected, /^[0-9a-f]{64}$/);
});

test('verifies against any active key; malformed signatures match none', () => {
  const data = 'x.y.z';
  const a = hmacKey('first-secret');
  const b = hmacKey('second-secret');
  assert.ok(verify([a, b], data, sign(b, data)));
  assert.ok(verify([a, b], data, sign(a, data)));
  assert.ok(!verify([a], data, sign(b, data)));
  assert.ok(!verify([a], data, sign(a, data).toUpperCase()));
  assert.ok(!verify([a], data, sign(a, data).slice(0, 63)));
  assert.ok(!verify([a], data, 'zz'.repeat(32)));
  assert.ok(!verify([], data, sign(a, data)));
});
