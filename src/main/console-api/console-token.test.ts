import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { manualClock } from '../../shared/clock.ts';
import { openDatabase } from '../store/db.ts';
import { createStore } from '../store/index.ts';
import { consoleTokenAtStart, createTokenCheck, deriveConsoleToken, LEGACY_TOKEN_SETTING, rotateConsoleToken, TOKEN_SETTING } from './console-token.ts';

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'sb-token-'));
  const store = createStore(openDatabase(join(dir, 'switchboard.db')));
  return { store, keyPath: join(dir, 'secret.key'), dir };
}

const allSettings = (store: ReturnType<typeof setup>['store']): string =>
  JSON.stringify(store.connection.prepare('SELECT key, value FROM settings').all());

test('the token is derived, the same after a restart, and only its salted hash is stored', () => {
  const { store, keyPath } = setup();
  const first = consoleTokenAtStart(store.settings, keyPath);
  assert.match(first.token, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(first.replacedPlainToken, false);
  assert.equal(consoleTokenAtStart(store.settings, keyPath).token, first.token, 'a restart prints the same URL');
  const stored = JSON.parse(store.settings.get(TOKEN_SETTING)!) as { salt: string; sha256: string };
  assert.equal(deriveConsoleToken(keyPath, stored.salt), first.token);
  assert.ok(!allSettings(store).includes(first.token), 'the token itself is nowhere in the settings table');
});

test('a plain-text token of an older version is replaced by salt and hash, and stops working', () => {
  const { store, keyPath } = setup();
  store.settings.put(LEGACY_TOKEN_SETTING, 'old-plain-token-0123456789');
  const started = consoleTokenAtStart(store.settings, keyPath);
  assert.equal(started.replacedPlainToken, true);
  assert.equal(store.settings.get(LEGACY_TOKEN_SETTING), undefined);
  assert.ok(!allSettings(store).includes('old-plain-token'));
  const check = createTokenCheck(store.settings);
  assert.equal(check('old-plain-token-0123456789'), false);
  assert.equal(check(started.token), true);
  assert.equal(consoleTokenAtStart(store.settings, keyPath).replacedPlainToken, false);
});

test('the check refuses a rotated token once it re-reads the hash (at most once a second)', async () => {
  const { store, keyPath } = setup();
  const old = consoleTokenAtStart(store.settings, keyPath).token;
  const clock = manualClock();
  const check = createTokenCheck(store.settings, clock);
  assert.equal(check(old), true);
  const fresh = await rotateConsoleToken(store.settings, keyPath);
  assert.notEqual(fresh, old);
  assert.equal(check(old), true, 'cached for up to a second');
  clock.advance(1000);
  assert.equal(check(old), false);
  assert.equal(check(fresh), true);
  assert.equal(consoleTokenAtStart(store.settings, keyPath).token, fresh, 'serve prints the rotated token after a restart');
  assert.equal(check(''), false);
  assert.equal(check(fresh + 'x'), false);
});

test('a replaced key file yields a new token whose hash is stored, so the printed URL works', () => {
  const { store, keyPath, dir } = setup();
  const before = consoleTokenAtStart(store.settings, keyPath).token;
  const after = consoleTokenAtStart(store.settings, join(dir, 'other.key')).token;
  assert.notEqual(after, before);
  const check = createTokenCheck(store.settings);
  assert.equal(check(after), true);
  assert.equal(check(before), false);
});
