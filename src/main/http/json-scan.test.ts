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
  const keys = Array.from({ length: 10_001 }, (_, i) => `"k${i}":1`).join(',');
  for (const size of [Infinity, 5, 64]) assert.match(scan(envelope(`{${keys}}`), size)!, /holds more than 10000 members and elements/);
  const fits = Array.from({ length: 9_990 }, (_, i) => i).join(',');
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

/** A seeded generator of JSON values with the strings that could confuse a scanner: quotes, backslashes, brackets, \u escapes, non-ASCII. */
function randomValue(next: () => number, depth: number): unknown {
  const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)]!;
  const text = (): string => Array.from({ length: Math.floor(next() * 12) }, () => pick(['a', '"', '\\', '[', ']', '{', '}', ',', ':', '\\"', '\\\\', 'é', '😀', '中', '\u0001', '/', ' '])).join('');
  const r = next();
  if (depth > 5 || r < 0.35) return pick([text(), Math.floor(next() * 1e6) / 7, true, false, null, -0.5e-7]);
  if (r < 0.65) return Array.from({ length: Math.floor(next() * 5) }, () => randomValue(next, depth + 1));
  return Object.fromEntries(Array.from({ length: Math.floor(next() * 5) }, () => [text(), randomValue(next, depth + 1)]));
}

/** Levels of nesting (the value's own container counts) and items as the scanner counts them (an empty container is one). */
function shapeOf(value: unknown): { depth: number; items: number } {
  if (value === null || typeof value !== 'object') return { depth: 0, items: 0 };
  const children = Array.isArray(value) ? value : Object.values(value);
  const inner = children.map(shapeOf);
  return { depth: 1 + Math.max(0, ...inner.map((s) => s.depth)), items: Math.max(1, children.length) + inner.reduce((n, s) => n + s.items, 0) };
}

test('on any JSON, cut anywhere, the scanner counts exactly what the bounds say: a body at its bounds passes, one level or one item less refuses it', () => {
  let seed = 27;
  const next = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let round = 0; round < 400; round++) {
    const value = { client: 'acme', message_info: randomValue(next, 0) };
    const { depth, items } = shapeOf(value);
    const longestName = Math.max(0, ...JSON.stringify(value).match(/"(?:[^"\\]|\\.)*"(?=:)/g)!.map((n) => Buffer.byteLength(n) - 2));
    const exact: JsonBounds = { maxDepth: depth, maxItems: items, maxNameBytes: longestName };
    const json = JSON.stringify(value);
    const size = 1 + Math.floor(next() * 9);
    assert.equal(scan(json, size, exact), null, `${json} in pieces of ${size}`);
    assert.match(scan(json, size, { ...exact, maxDepth: depth - 1 })!, /nests deeper/, json);
    assert.match(scan(json, size, { ...exact, maxItems: items - 1 })!, /holds more than/, json);
  }
});
