import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSendUrl, isForbiddenAddress } from './send-url.ts';

test('link-local and cloud metadata addresses are forbidden in every spelling', () => {
  for (const a of ['169.254.169.254', '169.254.0.1', '[fe80::1]', 'fe80::abcd', '::ffff:169.254.169.254', 'metadata.google.internal', 'METADATA.GOOGLE.INTERNAL.', '100.100.100.200', 'fd00:ec2::254']) {
    assert.ok(isForbiddenAddress(a), a);
  }
  for (const a of ['127.0.0.1', '10.0.0.1', 'example.com', '[::1]', '8.8.8.8', '169.255.0.1']) assert.ok(!isForbiddenAddress(a), a);
});

test('send_url: absolute http(s), no credentials, allowlist by origin', () => {
  assert.ok(checkSendUrl('https://hooks.example.com/a?b=1', undefined).ok);
  assert.deepEqual(checkSendUrl('mailto:x@example.com', undefined).ok, false);
  assert.equal((checkSendUrl('https://user:pw@example.com/', undefined) as { message: string }).message, 'must not contain credentials');
  const denied = checkSendUrl('https://other.example.com/x', ['https://hooks.example.com']);
  assert.deepEqual(denied.ok ? null : denied.code, 'send_url_not_allowed');
  assert.ok(checkSendUrl('https://hooks.example.com/deep/path', ['https://hooks.example.com']).ok);
  // The URL parser normalizes decimal and hex IPv4 spellings, so they cannot sneak past.
  assert.equal(checkSendUrl('http://2852039166/', undefined).ok, false);
  assert.equal(checkSendUrl('http://0xa9.0xfe.0xa9.0xfe/', undefined).ok, false);
});
