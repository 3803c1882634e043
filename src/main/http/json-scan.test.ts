import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJsonScanner, DEFAULT_JSON_BOUNDS, type JsonBounds } from './json-scan.ts';
import { HttpProblem } from './problem.ts';

/** Feeds `text` in pieces of `size` bytes; returns the refusal's detail, or null when it passed. */
function scan(text: string, size = Infinity, bounds: JsonBounds = DEFAULT_JSON_BOUNDS): string | null {
  const scanner = createJsonScanner(bounds);
  const bytes = Buffer.from(text);
  try {
    for (let i = 0; i < bytes.length; i += Math.min(size, bytes.length)) scanner.feed(bytes.subarray(i, i + size));
    return null;
  } catch (error) {
    assert.ok(error instanceof HttpProblem);
    assert.equal(error.status, 400);
    assert.equal(error.code, 'validation_failed');
    return error.message;
  }
}

const envelope = (info: string): string => `{"client":"acme","timestamp":1,"signature":"ab","message_info":${info}}`;
const SPLITS = [Infinity, 1, 2, 3, 7, 64];

test('a message as integrators send it passes, however its bytes arrive', () => {
  const info = JSON.stringify({
    event_type: 'auto_dialog',
    msg_id: 'm-1',
    content: 'a [bracket], a {brace}, a "quote" and a \\ backslash: none of them structure',
    at_list: Array.from({ length: 100 }, (_, i) => `user-${i}`),
    files_info: [{ content: 'A'.repeat(100_000), file_type: 'image' }],
    quote: { msg_id: 'm-0', message_type: 1, content: '\\"[[[[' },
  });
  for (const size of SPLITS) assert.equal(scan(envelope(info), size), null, `pieces of ${size}`);
});

test('nesting deeper than message_info may go is refused, wherever the chunks split', () => {
  const deep = envelope(`{"a":${'['.repeat(40)}`); // no need to close it: refused as it comes
  for (const size of SPLITS) assert.match(scan(deep, size)!, /nests deeper than 33 levels \(message_info: 32\)/);
  // message_info at its limit of 32 levels is fine: 33 with the envelope.
  const levels = (n: number): string => `{"x":${'['.repeat(n - 2)}{}${']'.repeat(n - 2)}}`;
  assert.equal(scan(envelope(levels(32))), null);
  assert.match(scan(envelope(levels(33)))!, /nests deeper/);
});

test('more members and elements than the bound are refused before the body ends', () => {
  const keys = Array.from({ length: 20_001 }, (_, i) => `"k${i}":1`).join(',');
  for (const size of [Infinity, 5, 64]) assert.match(scan(envelope(`{${keys}}`), size)!, /holds more than 20000 members and elements/);
  const fits = Array.from({ length: 19_990 }, (_, i) => i).join(',');
  assert.equal(scan(envelope(`[${fits}]`)), null, 'an array just under the bound');
});

test('strings never count as structure: brackets, commas and escaped quotes inside them are text', () => {
  const tight: JsonBounds = { maxDepth: 2, maxItems: 6, maxNameBytes: 16 };
  const text = '{"a":"[[[,,,{{{\\"]]],[[[","b":"\\\\","c":"\\\\\\"[[[,,,"}';
  for (const size of SPLITS) assert.equal(scan(text, size, tight), null, `pieces of ${size}`);
  // After an escaped backslash the quote closes the string: what follows is structure again.
  assert.match(scan('{"a":"\\\\",[[[', 1, tight)!, /nests deeper than 2 levels/);
});

test('member names are bounded in bytes; values are not', () => {
  const long = 'n'.repeat(257);
  for (const size of [Infinity, 1, 100]) assert.match(scan(envelope(`{"${long}":1}`), size)!, /member name longer than 256 bytes/);
  assert.equal(scan(envelope(`{"${'n'.repeat(256)}":"${long.repeat(1000)}"}`)), null);
  assert.equal(scan(envelope(`{"a":["${long}","${long}"]}`)), null, 'array elements are values, not names');
});
