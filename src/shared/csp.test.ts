import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONSOLE_CSP, CONSOLE_CSP_DEV_META, CONSOLE_CSP_META, parseCsp } from './csp.ts';

test('the console CSP allows our own scripts only and never plain http', () => {
  for (const policy of [CONSOLE_CSP, CONSOLE_CSP_META, CONSOLE_CSP_DEV_META]) {
    const d = parseCsp(policy);
    assert.deepEqual(d['default-src'], ["'self'"]);
    assert.deepEqual(d['object-src'], ["'none'"]);
    assert.deepEqual(d['base-uri'], ["'none'"]);
    assert.deepEqual(d['form-action'], ["'none'"]);
    assert.ok(!policy.includes('unsafe-eval'));
    assert.ok(!/(^|\s)http:/.test(policy), `no plain http: in ${policy}`);
    assert.ok(!/(^|\s)(\*|ws:|https:\/\/\*)/.test(policy), 'no wildcard sources');
    assert.deepEqual(d['connect-src'], ["'self'"], 'the console talks to its own service only');
    assert.deepEqual(d['img-src'], ["'self'", 'data:', 'https:'], 'https images are for click-to-load; data: stays inline');
    assert.deepEqual(d['media-src'], ["'self'", 'data:', 'https:']);
  }
});

test('the built policy has no inline allowances; only the dev server gets them', () => {
  assert.deepEqual(parseCsp(CONSOLE_CSP)['script-src'], ["'self'"]);
  assert.deepEqual(parseCsp(CONSOLE_CSP_META)['script-src'], ["'self'"]);
  assert.deepEqual(parseCsp(CONSOLE_CSP_META)['style-src'], ["'self'"]);
  assert.ok(!CONSOLE_CSP_META.includes('unsafe-inline'));
  assert.deepEqual(parseCsp(CONSOLE_CSP_DEV_META)['script-src'], ["'self'", "'unsafe-inline'"]);
});

test('frame-ancestors is in the header; the <meta> leaves it out because browsers ignore it there', () => {
  assert.deepEqual(parseCsp(CONSOLE_CSP)['frame-ancestors'], ["'none'"]);
  assert.equal(parseCsp(CONSOLE_CSP_META)['frame-ancestors'], undefined);
  const { 'frame-ancestors': _dropped, ...rest } = parseCsp(CONSOLE_CSP);
  assert.deepEqual(parseCsp(CONSOLE_CSP_META), rest, 'otherwise the same policy');
});
