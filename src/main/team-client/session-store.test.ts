import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSessionStore, SESSION_FILE } from './session-store.ts';
import { TeamClientError } from './team-client-error.ts';
import { fakeKeychain } from './keychain.fixture.ts';

const TOKEN = 'session-token-3f9a1c-never-on-disk-in-the-clear';
const ORIGIN = 'https://team.example:8788';

test('the session token is kept encrypted, for its server only, readable by this user only', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-session-'));
  const keychain = fakeKeychain();
  const store = createSessionStore(dir, keychain);
  assert.equal(store.load(ORIGIN), null);
  store.save(ORIGIN, TOKEN);
  const file = join(dir, SESSION_FILE);
  assert.doesNotMatch(readFileSync(file, 'utf8'), new RegExp(TOKEN), 'never in plain text');
  assert.doesNotMatch(readFileSync(file, 'utf8'), new RegExp(Buffer.from(TOKEN).toString('base64').slice(0, 20)));
  assert.equal(statSync(file).mode & 0o077, 0);
  assert.equal(createSessionStore(dir, keychain).load(ORIGIN), TOKEN, 'read back on the next run');
  assert.equal(store.load('https://other.example'), null, 'another server never gets this token');
  store.clear();
  assert.equal(existsSync(file), false);
});

test('without encryption it refuses to remember, says so, and leaves nothing on disk', () => {
  for (const keychain of [fakeKeychain({ available: false }), fakeKeychain({ backend: 'basic_text' })]) {
    const dir = mkdtempSync(join(tmpdir(), 'sb-session-'));
    const store = createSessionStore(dir, keychain);
    assert.throws(
      () => store.save(ORIGIN, TOKEN),
      (e: Error) => e instanceof TeamClientError && e.code === 'encryption_unavailable' && /not remembered, so you will sign in again/.test(e.message),
    );
    assert.equal(existsSync(join(dir, SESSION_FILE)), false);
  }
  // A token kept while encryption worked is dropped, not read, once it does not.
  const dir = mkdtempSync(join(tmpdir(), 'sb-session-'));
  const good = fakeKeychain();
  createSessionStore(dir, good).save(ORIGIN, TOKEN);
  assert.throws(() => createSessionStore(dir, { ...good, isEncryptionAvailable: () => false }).save(ORIGIN, 'new'));
  assert.equal(existsSync(join(dir, SESSION_FILE)), false);
});

test('a token that no longer decrypts (another keychain) or a damaged file is no session', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-session-'));
  createSessionStore(dir, fakeKeychain()).save(ORIGIN, TOKEN);
  assert.equal(createSessionStore(dir, fakeKeychain()).load(ORIGIN), null);
  assert.equal(existsSync(join(dir, SESSION_FILE)), false, 'dropped: sign in again');
  writeFileSync(join(dir, SESSION_FILE), '{"origin": 3}');
  assert.equal(createSessionStore(dir, fakeKeychain()).load(ORIGIN), null);
});
