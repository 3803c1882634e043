import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyFileModeWarning, keyIdOf, loadKey, loadPreviousKey, parseKey, resolveKeySource, writeFileAtomic, KEY_ENV, KEY_FILE_ENV, KEY_PREVIOUS_ENV } from './sealing-key.ts';

const dir = () => mkdtempSync(join(tmpdir(), 'sb-key-'));
const b64 = () => randomBytes(32).toString('base64');

test('precedence: --secret-key-file, then the environment (a file or the key itself), then config.json, then the data folder', () => {
  const d = dir();
  const env = { [KEY_FILE_ENV]: '/env/key', [KEY_ENV]: undefined };
  assert.deepEqual(resolveKeySource({ flagFile: 'flag.key', env, configFile: 'cfg.key', dataDir: d }), { kind: 'file', path: join(process.cwd(), 'flag.key'), label: `--secret-key-file ${join(process.cwd(), 'flag.key')}`, createIfMissing: false });
  assert.deepEqual(resolveKeySource({ env, configFile: 'cfg.key', dataDir: d }), { kind: 'file', path: '/env/key', label: `${KEY_FILE_ENV}=/env/key`, createIfMissing: false });
  assert.deepEqual(resolveKeySource({ env: { [KEY_ENV]: 'abc' }, configFile: 'cfg.key', dataDir: d }), { kind: 'env', text: 'abc', label: KEY_ENV, previousText: null });
  assert.deepEqual(resolveKeySource({ env: {}, configFile: 'cfg.key', dataDir: d }), { kind: 'file', path: join(d, 'cfg.key'), label: `secretKeyFile ${join(d, 'cfg.key')} (config.json)`, createIfMissing: false });
  assert.deepEqual(resolveKeySource({ env: { [KEY_ENV]: '' }, dataDir: d }), { kind: 'file', path: join(d, 'secret.key'), label: join(d, 'secret.key'), createIfMissing: true });
  assert.throws(() => resolveKeySource({ env: { [KEY_FILE_ENV]: '/a', [KEY_ENV]: 'b' }, dataDir: d }), /both SWITCHBOARD_SECRET_KEY_FILE and SWITCHBOARD_SECRET_KEY are set/);
});

test('SWITCHBOARD_SECRET_KEY_PREVIOUS is the previous key of SWITCHBOARD_SECRET_KEY only; beside a key file it is an error naming the file\'s .old', () => {
  const d = dir();
  const [now, before] = [b64(), b64()];
  const source = resolveKeySource({ env: { [KEY_ENV]: now, [KEY_PREVIOUS_ENV]: before }, dataDir: d });
  assert.deepEqual(source, { kind: 'env', text: now, label: KEY_ENV, previousText: before });
  assert.equal(loadPreviousKey(source)?.id, keyIdOf(Buffer.from(before, 'base64')));
  assert.equal(loadPreviousKey(resolveKeySource({ env: { [KEY_ENV]: now, [KEY_PREVIOUS_ENV]: '' }, dataDir: d })), null);
  assert.throws(() => loadPreviousKey(resolveKeySource({ env: { [KEY_ENV]: now, [KEY_PREVIOUS_ENV]: 'short' }, dataDir: d })), /^Error: SWITCHBOARD_SECRET_KEY_PREVIOUS holds 3 bytes, not a 32-byte key/);
  assert.throws(() => resolveKeySource({ flagFile: 'k', env: { [KEY_PREVIOUS_ENV]: before }, dataDir: d }), /SWITCHBOARD_SECRET_KEY_PREVIOUS goes with SWITCHBOARD_SECRET_KEY; this node's key comes from --secret-key-file .*\/k, whose previous key is the file .*\/k\.old/);
  assert.throws(() => resolveKeySource({ env: { [KEY_PREVIOUS_ENV]: before }, dataDir: d }), /goes with SWITCHBOARD_SECRET_KEY; .* the file .*secret\.key\.old/);
});

test('a key is base64 or base64url of exactly 32 bytes; anything else is an error naming its source, never showing the key', () => {
  const bytes = randomBytes(32);
  for (const text of [bytes.toString('base64'), bytes.toString('base64url'), `  ${bytes.toString('base64')}\n`]) {
    const key = parseKey(text, 'K');
    assert.ok(key.bytes.equals(bytes));
    assert.equal(key.id, keyIdOf(bytes));
    assert.match(key.id, /^[0-9a-f]{8}$/);
  }
  const cases: Array<[string, RegExp]> = [
    ['', /^SWITCHBOARD_SECRET_KEY is empty: /],
    ['not base64!', /^SWITCHBOARD_SECRET_KEY is not base64: it must hold a 32-byte key/],
    [randomBytes(16).toString('base64'), /^SWITCHBOARD_SECRET_KEY holds 16 bytes, not a 32-byte key/],
    [randomBytes(33).toString('base64'), /^SWITCHBOARD_SECRET_KEY holds 33 bytes, not a 32-byte key/],
  ];
  for (const [text, expected] of cases) {
    assert.throws(() => parseKey(text, KEY_ENV), (e: Error) => expected.test(e.message) && (text === '' || !e.message.includes(text)) && !e.message.includes('\n'), text);
  }
});

test('a named key file must exist and be readable (never created); the data folder\'s is created 0600 on first use', () => {
  const d = dir();
  const missing = { kind: 'file' as const, path: join(d, 'none.key'), label: '--secret-key-file ' + join(d, 'none.key'), createIfMissing: false };
  assert.throws(() => loadKey(missing), (e: Error) => e.message === `cannot read the secret key --secret-key-file ${join(d, 'none.key')}: no such file`);
  mkdirSync(join(d, 'folder.key'));
  assert.throws(() => loadKey({ ...missing, path: join(d, 'folder.key'), label: 'F' }), /cannot read the secret key F: it is a folder/);
  if (process.getuid?.() !== 0) {
    writeFileSync(join(d, 'locked.key'), b64(), { mode: 0o000 });
    assert.throws(() => loadKey({ ...missing, path: join(d, 'locked.key'), label: 'L' }), /cannot read the secret key L: permission denied/);
  }
  const own = { kind: 'file' as const, path: join(d, 'data', 'secret.key'), label: 'own', createIfMissing: true };
  const made = loadKey(own);
  assert.equal(statSync(own.path).mode & 0o777, 0o600);
  assert.equal(loadKey(own).id, made.id, 'read again, not replaced');
});

test('a key file other local users may read gets a one-line warning with the command that closes it', () => {
  const d = dir();
  const path = join(d, 'shared.key');
  writeFileSync(path, b64());
  chmodSync(path, 0o640);
  const source = { kind: 'file' as const, path, label: `--secret-key-file ${path}`, createIfMissing: false };
  assert.equal(keyFileModeWarning(source), `warning: the secret key --secret-key-file ${path} is open to other local users (0640); to make it private run: chmod 600 '${path}'`);
  chmodSync(path, 0o600);
  assert.equal(keyFileModeWarning(source), null);
  assert.equal(keyFileModeWarning({ kind: 'env', text: b64(), label: KEY_ENV, previousText: null }), null);
});

test('an atomic write replaces the whole file, 0600, leaving no temporary file', () => {
  const d = dir();
  const path = join(d, 'secret.key');
  writeFileSync(path, 'old', { mode: 0o644 });
  writeFileAtomic(path, 'new\n');
  assert.equal(readFileSync(path, 'utf8'), 'new\n');
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(d), ['secret.key']);
});
