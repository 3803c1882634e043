import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { combinedBox, generateSecret, keychainBox, keyFileBox } from './secret-box.ts';

const dir = () => mkdtempSync(join(tmpdir(), 'sb-box-'));

test('key file box: round trip, 0600 key file, and the same key on reopen', () => {
  const path = join(dir(), 'secret.key');
  const box = keyFileBox(path);
  const sealed = box.seal('s3cret');
  assert.match(sealed, /^keyfile:/);
  assert.ok(!sealed.includes('s3cret'));
  assert.equal(keyFileBox(path).open(sealed), 's3cret');
  assert.equal(statSync(path).mode & 0o777, 0o600);
});

test('a replaced key file is a clear error, not garbage', () => {
  const d = dir();
  const sealed = keyFileBox(join(d, 'a.key')).seal('x');
  assert.throws(() => keyFileBox(join(d, 'b.key')).open(sealed), /wrong or replaced key file/);
  writeFileSync(join(d, 'short.key'), 'abc');
  assert.throws(() => keyFileBox(join(d, 'short.key')), /not a 32-byte key/);
});

test('combined box seals with the keychain and still opens key-file secrets', () => {
  const fake = {
    isEncryptionAvailable: () => true,
    encryptString: (s: string) => Buffer.from([...Buffer.from(s)].reverse()),
    decryptString: (b: Buffer) => Buffer.from([...b].reverse()).toString(),
  };
  const file = keyFileBox(join(dir(), 'k.key'));
  const box = combinedBox([keychainBox(fake), file]);
  assert.match(box.seal('abc'), /^keychain:/);
  assert.equal(box.open(box.seal('abc')), 'abc');
  assert.equal(box.open(file.seal('from-cli')), 'from-cli');
  assert.throws(() => file.open(box.seal('x')), /not a key-file secret \(sealed with "keychain"\)/);
});

test('generated secrets are 32 random bytes in base64url', () => {
  const s = generateSecret();
  assert.equal(Buffer.from(s, 'base64url').length, 32);
  assert.notEqual(s, generateSecret());
});

test('a value sealed before key ids (the v1 format) opens with its key', async () => {
  const { V1_SEALED } = await import('./secret-box.fixture.ts');
  const path = join(dir(), 'secret.key');
  writeFileSync(path, V1_SEALED.key + '\n', { mode: 0o600 });
  assert.equal(keyFileBox(path).open(V1_SEALED.sealed), V1_SEALED.plain);
});
