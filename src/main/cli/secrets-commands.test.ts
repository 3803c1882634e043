import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../store/db.ts';
import { createStore } from '../store/index.ts';
import { clientSettingsSchema } from '../../shared/client-settings.ts';
import { keyringBox, openKeyring } from '../auth/secret-box.ts';
import { parseKey, type KeySource } from '../auth/sealing-key.ts';
import { V1_SEALED } from '../auth/secret-box.fixture.ts';
import { newKeyCommand, secretsCommand } from './secrets-commands.ts';
import { UsageError } from './args.ts';
import { sqliteTarget } from './store-target.ts';

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'sb-secrets-cli-'));
  const keyPath = join(dir, 'secret.key');
  writeFileSync(keyPath, V1_SEALED.key + '\n', { mode: 0o600 });
  const store = createStore(openDatabase(join(dir, 'switchboard.db')));
  const source: KeySource = { kind: 'file', path: keyPath, label: keyPath, createIfMissing: true };
  const ring = () => openKeyring(source);
  store.clients.create('acme', clientSettingsSchema.parse({}), 1);
  store.clients.addSecret('acme', V1_SEALED.sealed, 'v1..', 1);
  store.clients.addSecret('acme', keyringBox(ring()).seal('acme-second-secret'), 'cret', 2);
  store.clients.create('desk', clientSettingsSchema.parse({}), 1);
  store.clients.addSecret('desk', 'keychain:AAAA', 'desk', 3);
  return { dir, keyPath, store, ring, id: parseKey(V1_SEALED.key, 'k').id };
}

test('secrets check names this node\'s key, counts values by the key that sealed them, and exits 0 when all open', async () => {
  const s = setup();
  const { out, status } = await secretsCommand(sqliteTarget(s.store), s.ring, ['check'], {});
  assert.equal(status, 0);
  assert.equal(out, [
    `this node's key: ${s.id} (${s.keyPath})`,
    'sealed with the older format (no key id): 1',
    `sealed with key ${s.id} (this node's): 1`,
    `sealed with "keychain" (the desktop app's OS keychain; not checked here): 1`,
    "all 2 values open with this node's keys",
    `1 not under this node's key ${s.id}: "secrets reseal" moves them`,
  ].join('\n'));
  assert.equal((await secretsCommand(sqliteTarget(s.store), s.ring, ['reseal'], {})).out, `re-sealed 1 value under key ${s.id}`);
  assert.doesNotMatch((await secretsCommand(sqliteTarget(s.store), s.ring, ['check'], {})).out, /older format|reseal/);
});

test('rotate-key with --new-key-file installs that key; check then says when the previous key may go', async () => {
  const s = setup();
  const file = join(s.dir, 'next.key');
  assert.match(newKeyCommand([file]), /^wrote a new key to .*next\.key \(key [0-9a-f]{8}, 0600\)$/);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const next = parseKey(readFileSync(file, 'utf8'), 'n');
  const { out } = await secretsCommand(sqliteTarget(s.store), s.ring, ['rotate-key'], { 'new-key-file': file });
  assert.match(out, new RegExp(`^re-sealed 2 values: key ${s.id} → ${next.id}\n1 sealed by the desktop app's OS keychain left as they were`));
  assert.equal(readFileSync(s.keyPath, 'utf8').trim(), readFileSync(file, 'utf8').trim());
  assert.match((await secretsCommand(sqliteTarget(s.store), s.ring, ['check'], {})).out, new RegExp(`no value needs the previous key: once every node runs key ${next.id}, remove .*secret\\.key\\.old$`));
});

test('usage errors: stray arguments, --new-key-file elsewhere, new-key over an existing file, unknown actions', async () => {
  const s = setup();
  const usage = (fn: () => unknown, message: RegExp) => assert.throws(fn, (e: Error) => e instanceof UsageError && message.test(e.message));
  const refused = (fn: () => Promise<unknown>, message: RegExp) => assert.rejects(fn, (e: Error) => e instanceof UsageError && message.test(e.message));
  await refused(() => secretsCommand(sqliteTarget(s.store), s.ring, ['check', 'x'], {}), /^secrets check takes no argument, got "x"$/);
  await refused(() => secretsCommand(sqliteTarget(s.store), s.ring, ['check'], { 'new-key-file': 'k' }), /^--new-key-file goes with secrets rotate-key$/);
  await refused(() => secretsCommand(sqliteTarget(s.store), s.ring, ['spin'], {}), /^unknown secrets command "spin"; use check, rotate-key, reseal or new-key$/);
  usage(() => newKeyCommand([s.keyPath]), /secret\.key exists; secrets new-key never overwrites a key$/);
  usage(() => newKeyCommand([]), /^secrets new-key needs a FILE/);
  assert.equal(readFileSync(s.keyPath, 'utf8').trim(), V1_SEALED.key);
});
