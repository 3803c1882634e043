import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KB_THRESHOLD_SETTING, thresholdSource } from './kb-threshold.ts';

test('the threshold set from the console wins over the configured one, read at each call; an unreadable row counts as unset', () => {
  const rows = new Map<string, string>();
  const threshold = thresholdSource({ get: (key) => rows.get(key) }, 0.55);
  assert.equal(threshold(), 0.55);
  rows.set(KB_THRESHOLD_SETTING, '0.4');
  assert.equal(threshold(), 0.4);
  rows.set(KB_THRESHOLD_SETTING, 'lots');
  assert.equal(threshold(), 0.55);
  rows.set(KB_THRESHOLD_SETTING, '7');
  assert.equal(threshold(), 0.55, 'out of 0..1');
});
