import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { combinedBox, generateSecret, keychainBox, keyFileBox, sealedFormat } from './secret-box.ts';

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
  const a = keyFileBox(join(d, 'a.key')).keyId();
  const b = keyFileBox(join(d, 'b.key')).keyId();
  assert.throws(
    () => keyFileBox(join(d, 'b.key')).open(sealed),
    (e: Error) => e.message === `secret sealed with key ${a}, this node has key ${b} (${join(d, 'b.key')}): every node must share one key; see docs/operations.md, "Secret key"`,
  );
  writeFileSync(join(d, 'short.key'), 'abc');
  assert.throws(() => keyFileBox(join(d, 'short.key')), /short\.key holds 2 bytes, not a 32-byte key/);
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

test('a sealed value names the key that sealed it, and that name is bound to the ciphertext', () => {
  const box = keyFileBox(join(dir(), 'secret.key'));
  const sealed = box.seal('abc');
  assert.match(sealed, new RegExp(`^keyfile:v2:${box.keyId()}:[A-Za-z0-9_-]+$`));
  assert.deepEqual({ ...sealedFormat(sealed), raw: null }, { kind: 'v2', keyId: box.keyId(), raw: null });
  // Another id written over the real one does not open, even where the named key is known.
  const relabelled = sealed.replace(box.keyId(), '00000000');
  assert.throws(() => box.open(relabelled), /sealed with key 00000000, this node has key/);
  const flipped = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'B' : 'A') + sealed.slice(-1);
  assert.throws(() => box.open(flipped), new RegExp(`sealed with key ${box.keyId()} does not decrypt with that key: the stored value is damaged`));
});

test('a v1 value under another key says so, naming this node\'s key', async () => {
  const { V1_SEALED } = await import('./secret-box.fixture.ts');
  const box = keyFileBox(join(dir(), 'secret.key'));
  assert.throws(() => box.open(V1_SEALED.sealed), new RegExp(`sealed before key ids \\(an older version\\): this node has key ${box.keyId()} .*neither opens it`));
});

test('the previous key (<key file>.old) opens values, never seals; a key file replaced by another process is read again', () => {
  const d = dir();
  const path = join(d, 'secret.key');
  const first = keyFileBox(path);
  const old = first.seal('under the first key');
  const firstKey = readFileSync(path, 'utf8');
  const running = keyFileBox(path);
  // A rotation by another process: the old key moves aside, a new one takes its place.
  writeFileSync(`${path}.old`, firstKey, { mode: 0o600 });
  writeFileSync(path, randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
  const next = keyFileBox(path);
  assert.notEqual(next.keyId(), first.keyId());
  assert.equal(next.open(old), 'under the first key');
  assert.match(next.seal('x'), new RegExp(`^keyfile:v2:${next.keyId()}:`));
  // The box that read the first key seals with the new one now and opens what the new one sealed.
  assert.equal(running.open(next.seal('new')), 'new');
  assert.match(running.seal('y'), new RegExp(`^keyfile:v2:${next.keyId()}:`));
});
