import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseInstant, parseSince, resolveWindow } from './window.ts';

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);
const DAY = 86_400_000;

test('--since takes minutes, hours, days and weeks back from now', () => {
  assert.equal(parseSince('90m'), 90 * 60_000);
  assert.equal(parseSince('24h'), DAY);
  assert.equal(parseSince('7d'), 7 * DAY);
  assert.equal(parseSince('2w'), 14 * DAY);
  assert.deepEqual(resolveWindow({ since: '7d' }, NOW), { from: NOW - 7 * DAY, to: NOW });
});

test('a --since without a unit it knows, zero, or past a year is refused in one line naming the flag', () => {
  for (const bad of ['7x', '7', 'd', '-1d', '7 days', '1.5d', '']) assert.throws(() => parseSince(bad), /^Error: --since takes a number and a unit \(m, h, d or w\), like 7d or 24h; got "/, bad);
  assert.throws(() => parseSince('0d'), /more than 0/);
  assert.throws(() => parseSince('400d'), /at most a year/);
});

test('--from/--to take dates, ISO times or epoch ms; --to defaults to now and must follow --from', () => {
  assert.equal(parseInstant('2026-11-14', '--from'), Date.UTC(2026, 10, 14));
  assert.equal(parseInstant('2026-11-14T09:30:00Z', '--from'), Date.UTC(2026, 10, 14, 9, 30));
  assert.equal(parseInstant(String(NOW), '--to'), NOW);
  assert.throws(() => parseInstant('last tuesday', '--from'), /^Error: --from takes a date/);
  assert.throws(() => parseInstant('2026-13-45', '--to'), /^Error: --to takes a date/);
  assert.deepEqual(resolveWindow({ from: NOW - DAY }, NOW), { from: NOW - DAY, to: NOW });
  assert.throws(() => resolveWindow({ from: NOW, to: NOW - 1 }, NOW), /--to must be after --from/);
  assert.throws(() => resolveWindow({ since: '7d', from: NOW - DAY }, NOW), /either --since or --from/);
  assert.throws(() => resolveWindow({}, NOW), /--since 7d, or --from DATE/);
});
