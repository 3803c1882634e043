import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../store/db.ts';
import { createStore, type Store } from '../store/index.ts';
import { clientSettingsSchema } from '../../shared/client-settings.ts';
import { engineConfigSchema } from '../../shared/engine-config.ts';
import { keyringBox, openKeyring, sealedFormat } from './secret-box.ts';
import { checkSecrets, resealStoredSecrets, rotateStoredKey, type RotationHooks } from './key-rotation.ts';
import { sqliteInTransaction } from '../store/in-transaction.ts';
import type { Keyring } from './secret-box.ts';
import type { SealingKey } from './sealing-key.ts';

/** The SQLite store as the rotation's target (the CLI's data folder). */
const rotateKey = (store: Store, ring: Keyring, given: SealingKey | null, hooks?: RotationHooks) => rotateStoredKey({ transaction: sqliteInTransaction(store) }, ring, given, hooks);
const resealSecrets = (store: Store, ring: Keyring) => resealStoredSecrets({ transaction: sqliteInTransaction(store) }, ring);
import { KEY_ENV, KEY_PREVIOUS_ENV, parseKey, resolveKeySource, type KeySource } from './sealing-key.ts';
import { V1_SEALED } from './secret-box.fixture.ts';

interface Setup {
  dir: string;
  store: Store;
  keyPath: string;
  source: KeySource;
}

/** A data folder whose key is the fixture's, holding a v1 value, v2 values, a retired secret, an engine key and a keychain value. */
function setup(): Setup {
  const dir = mkdtempSync(join(tmpdir(), 'sb-rotate-'));
  const keyPath = join(dir, 'secret.key');
  writeFileSync(keyPath, V1_SEALED.key + '\n', { mode: 0o600 });
  const store = createStore(openDatabase(join(dir, 'switchboard.db')));
  const source: KeySource = { kind: 'file', path: keyPath, label: keyPath, createIfMissing: true };
  const box = keyringBox(openKeyring(source));
  const settings = clientSettingsSchema.parse({});
  store.clients.create('old', settings, 1);
  store.clients.addSecret('old', V1_SEALED.sealed, 'v1..', 1);
  store.clients.create('acme', settings, 1);
  for (const s of ['acme-first-secret', 'acme-second-secret', 'acme-third-secret']) store.clients.addSecret('acme', box.seal(s), s.slice(-4), 2);
  store.clients.create('desk', settings, 1);
  store.clients.addSecret('desk', 'keychain:AAAA', 'desk', 3);
  store.engines.save('local', engineConfigSchema.parse({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm' }), box.seal('sk-engine-key'), 4);
  return { dir, store, keyPath, source };
}

/** Every value opens, as a process started now would open it (the key files as they are on disk). */
function everyValueOpens(s: Setup): void {
  const fresh = keyringBox(openKeyring(s.source));
  const opened = [
    ...s.store.clients.sealedSecrets().filter((r) => !r.sealed.startsWith('keychain:')).map((r) => fresh.open(r.sealed)),
    ...s.store.engines.sealedKeys().map((k) => fresh.open(k.sealed)),
  ].sort();
  assert.deepEqual(opened, [V1_SEALED.plain, 'acme-first-secret', 'acme-second-secret', 'acme-third-secret', 'sk-engine-key'].sort());
}

const keyIds = (s: Setup): string[] => [...s.store.clients.sealedSecrets().map((r) => r.sealed), ...s.store.engines.sealedKeys().map((k) => k.sealed)].map((v) => {
  const f = sealedFormat(v);
  return f.kind === 'v2' ? f.keyId : f.kind;
});

test('rotate-key re-seals every client secret (retired ones too) and engine key under a new key, keeps the old as .old, leaves keychain values', async () => {
  const s = setup();
  const before = parseKey(V1_SEALED.key, 'fixture');
  const report = await rotateKey(s.store, openKeyring(s.source), null);
  assert.equal(report.from.id, before.id);
  assert.equal(report.resealed, 5);
  assert.equal(report.foreign, 1);
  assert.deepEqual(report.wrote, { key: s.keyPath, previous: `${s.keyPath}.old` });
  assert.equal(readFileSync(`${s.keyPath}.old`, 'utf8').trim(), before.bytes.toString('base64url'));
  const now = parseKey(readFileSync(s.keyPath, 'utf8'), 'new');
  assert.equal(now.id, report.to.id);
  assert.deepEqual(keyIds(s).sort(), [...Array(5).fill(now.id), 'other'].sort());
  everyValueOpens(s);
  assert.equal(s.store.clients.sealedSecrets().find((r) => r.clientId === 'desk')!.sealed, 'keychain:AAAA');
  assert.deepEqual(readdirSync(s.dir).filter((f) => f.includes('tmp')), [], 'no temporary key file left');
  const check = checkSecrets(s.store, openKeyring(s.source));
  assert.deepEqual({ failures: check.failures, notUnderCurrent: check.notUnderCurrent }, { failures: [], notUnderCurrent: 0 });
});

const STEPS: Array<keyof RotationHooks> = ['afterResealUnderCurrent', 'afterPreviousKeyWritten', 'afterKeyFileWritten', 'beforeCommit'];

for (const step of STEPS) {
  test(`a rotation stopped at ${step} leaves every value openable from the files on disk, and so does a second one stopped anywhere; a third completes`, async () => {
    for (const second of STEPS) {
      const s = setup();
      const crash = (at: keyof RotationHooks): RotationHooks => ({ [at]: () => { throw new Error(`crash at ${at}`); } });
      await assert.rejects(() => rotateKey(s.store, openKeyring(s.source), null, crash(step)), new RegExp(`crash at ${step}`));
      everyValueOpens(s);
      await assert.rejects(() => rotateKey(s.store, openKeyring(s.source), null, crash(second)), new RegExp(`crash at ${second}`));
      everyValueOpens(s);
      const again = await rotateKey(s.store, openKeyring(s.source), null);
      assert.equal(again.resealed, 5);
      everyValueOpens(s);
      assert.deepEqual(new Set(keyIds(s)), new Set([again.to.id, 'other']));
    }
  });
}

test('a value that does not open stops the rotation before anything is written', async () => {
  const s = setup();
  const stranger = keyringBox(openKeyring({ kind: 'env', text: randomBytes(32).toString('base64'), label: 'x', previousText: null }));
  s.store.clients.addSecret('old', stranger.seal('sealed elsewhere'), 'else', 5);
  const keyBefore = readFileSync(s.keyPath, 'utf8');
  await assert.rejects(() => rotateKey(s.store, openKeyring(s.source), null), (e: Error) => /^1 stored value does not open with this node's keys, so nothing was changed \(client old secret …else: secret sealed with key [0-9a-f]{8}, this node has key/.test(e.message));
  assert.equal(readFileSync(s.keyPath, 'utf8'), keyBefore);
  assert.equal(existsSync(`${s.keyPath}.old`), false);
});

test('a key from the environment: rotate-key needs the new key in a file, writes nothing, and re-seals under it', async () => {
  const s = setup();
  const env: KeySource = { kind: 'env', text: V1_SEALED.key, label: KEY_ENV, previousText: null };
  await assert.rejects(() => rotateKey(s.store, openKeyring(env), null), /comes from SWITCHBOARD_SECRET_KEY, which this command cannot change: make a new key with "npm run cli -- secrets new-key FILE"/);
  const next = parseKey(randomBytes(32).toString('base64'), '--new-key-file k');
  const report = await rotateKey(s.store, openKeyring(env), next);
  assert.equal(report.wrote, null);
  assert.deepEqual(readdirSync(s.dir).sort(), ['secret.key', 'switchboard.db', 'switchboard.db-shm', 'switchboard.db-wal'].filter((f) => existsSync(join(s.dir, f))));
  assert.deepEqual(new Set(keyIds(s)), new Set([next.id, 'other']));
  await assert.rejects(() => rotateKey(s.store, openKeyring({ kind: 'env', text: next.bytes.toString('base64'), label: KEY_ENV, previousText: null }), next), /the new key is this node's key already/);
});

test('reseal moves every value under the current key after the key was changed by hand (old key kept as .old)', async () => {
  const s = setup();
  writeFileSync(`${s.keyPath}.old`, readFileSync(s.keyPath));
  writeFileSync(s.keyPath, randomBytes(32).toString('base64url') + '\n');
  const ring = openKeyring(s.source);
  const check = checkSecrets(s.store, ring);
  assert.equal(check.failures.length, 0);
  assert.equal(check.notUnderCurrent, 5);
  assert.equal(await resealSecrets(s.store, ring), 5);
  assert.equal(await resealSecrets(s.store, ring), 0, 'nothing left to move');
  assert.deepEqual(new Set(keyIds(s)), new Set([ring.keys().current.id, 'other']));
  everyValueOpens(s);
});

test('a key from the environment: nodes given the new key and SWITCHBOARD_SECRET_KEY_PREVIOUS open every value while others still have the old key; reseal, then the previous key is not needed', async () => {
  const s = setup();
  const next = randomBytes(32).toString('base64');
  const env = resolveKeySource({ env: { [KEY_ENV]: next, [KEY_PREVIOUS_ENV]: V1_SEALED.key }, dataDir: s.dir });
  const ring = openKeyring(env);
  assert.equal(ring.keys().previous?.source, KEY_PREVIOUS_ENV);
  const check = checkSecrets(s.store, ring);
  assert.deepEqual({ failures: check.failures.length, notUnderCurrent: check.notUnderCurrent }, { failures: 0, notUnderCurrent: 5 }, 'everything opens, under the previous key');
  // A node still on the old key alone opens what it sealed before; a value sealed now by the new node it cannot (docs: add none meanwhile).
  assert.equal(await resealSecrets(s.store, ring), 5);
  const after = checkSecrets(s.store, openKeyring(resolveKeySource({ env: { [KEY_ENV]: next }, dataDir: s.dir })));
  assert.deepEqual({ failures: after.failures.length, notUnderCurrent: after.notUnderCurrent }, { failures: 0, notUnderCurrent: 0 }, 'the previous key can go');
});

test('a rotation that another finished meanwhile stops before it writes a key file; every value opens under the other\'s key', async () => {
  const s = setup();
  const other = createStore(openDatabase(join(s.dir, 'switchboard.db')));
  let theirs = '';
  await assert.rejects(() => rotateKey(s.store, openKeyring(s.source), null, { afterResealUnderCurrent: async () => void (theirs = (await rotateKey(other, openKeyring(s.source), null)).to.id) }),
    /the key changed while this rotation ran \(another rotation\?\); nothing more was changed/,
  );
  assert.equal(parseKey(readFileSync(s.keyPath, 'utf8'), 'k').id, theirs);
  assert.deepEqual(new Set(keyIds(s)), new Set([theirs, 'other']));
  everyValueOpens(s);
  other.close();
});
