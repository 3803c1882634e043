import type { Store } from '../store/index.ts';
import type { StoreContract } from '../store/contract.ts';
import type { InTransaction } from '../store/in-transaction.ts';
import { keyringBox, sealedFormat, type Keyring, type KeyringKeys } from './secret-box.ts';
import { keyFileText, newKey, previousKeyPath, SecretKeyError, writeFileAtomic, type SealingKey } from './sealing-key.ts';

type SealedStore = Pick<StoreContract, 'clients' | 'engines'>;

/** One stored sealed value: a client secret (retired ones too) or an engine's API key. */
interface SealedValue {
  label: string;
  sealed: string;
  /** Writes the value sealed again; false when the row changed meanwhile (another rotation committed first). */
  reseal(to: string): Promise<boolean>;
}

type SecretRows = ReturnType<Store['clients']['sealedSecrets']>;
type KeyRows = ReturnType<Store['engines']['sealedKeys']>;

const secretLabel = (s: SecretRows[number]): string => `client ${s.clientId} secret …${s.hint}${s.retired ? ' (retired)' : ''}`;
const keyLabel = (k: KeyRows[number]): string => `engine ${k.name} API key`;

async function sealedValues(store: SealedStore): Promise<SealedValue[]> {
  const [secrets, keys] = [await store.clients.sealedSecrets(), await store.engines.sealedKeys()];
  return [
    ...secrets.map((s) => ({ label: secretLabel(s), sealed: s.sealed, reseal: async (to: string) => await store.clients.resealSecret(s.id, s.sealed, to) })),
    ...keys.map((k) => ({ label: keyLabel(k), sealed: k.sealed, reseal: async (to: string) => await store.engines.resealKey(k.name, k.sealed, to) })),
  ];
}

/** How a value was sealed, as `secrets check` shows it: a key id, "v1" (before key ids), or another scheme. */
function sealedWith(sealed: string): string {
  const format = sealedFormat(sealed);
  return format.kind === 'v2' ? format.keyId : format.kind === 'v1' ? 'v1' : format.scheme;
}

/** Sealed by the desktop app's OS keychain: only that app on that computer opens it; no key here applies. */
const isForeign = (sealed: string): boolean => sealedFormat(sealed).kind === 'other';

export interface CheckReport {
  keys: KeyringKeys;
  /** Count of values per sealedWith. */
  bySealer: Map<string, number>;
  failures: Array<{ label: string; error: string }>;
  /** Values sealed by another scheme (the desktop's keychain), not checked. */
  foreign: number;
  /** Some value is not under the current key: `secrets reseal` would change it. */
  notUnderCurrent: number;
}

/** Opens every sealed value with this node's keys (nothing is written). */
export function checkSecrets(store: Store, ring: Keyring): CheckReport {
  return checkSealed([...store.clients.sealedSecrets().map((s) => ({ label: secretLabel(s), sealed: s.sealed })), ...store.engines.sealedKeys().map((k) => ({ label: keyLabel(k), sealed: k.sealed }))], ring);
}

/** As checkSecrets, over values read elsewhere (a PostgreSQL node's mirror of its clients and engines). */
export function checkSealed(values: Iterable<{ label: string; sealed: string }>, ring: Keyring): CheckReport {
  const keys = ring.fresh();
  const box = keyringBox(ring);
  const report: CheckReport = { keys, bySealer: new Map(), failures: [], foreign: 0, notUnderCurrent: 0 };
  for (const value of values) {
    const by = sealedWith(value.sealed);
    report.bySealer.set(by, (report.bySealer.get(by) ?? 0) + 1);
    if (isForeign(value.sealed)) {
      report.foreign++;
      continue;
    }
    if (by !== keys.current.id) report.notUnderCurrent++;
    try {
      box.open(value.sealed);
    } catch (error) {
      report.failures.push({ label: value.label, error: (error as Error).message });
    }
  }
  return report;
}

/** Steps of a rotation a test can stop at, as a crash would. */
export interface RotationHooks {
  /** After step 1 committed, before step 2 takes the lock again (awaited: a test may run another rotation here). */
  afterResealUnderCurrent?(): void | Promise<void>;
  afterPreviousKeyWritten?(): void;
  afterKeyFileWritten?(): void;
  /** Inside the transaction, after every value was re-sealed. */
  beforeCommit?(): void;
}

export interface RotationReport {
  from: SealingKey;
  to: SealingKey;
  resealed: number;
  /** Values sealed by the desktop's keychain, left as they were. */
  foreign: number;
  /** Where the new key was written (file sources); null when the key comes from the environment. */
  wrote: { key: string; previous: string } | null;
}

/** Where a rotation reads and writes: a store's transactions (SQLite's immediate one, or one PostgreSQL transaction). */
export interface SealedTarget {
  transaction: InTransaction<SealedStore>;
}

/** `secrets check`: opens every stored value with this node's keys; nothing is written. */
export async function checkStoredSecrets(store: SealedStore, ring: Keyring): Promise<CheckReport> {
  return checkSealed(await sealedValues(store), ring);
}

/** Keys fixed for one step of a rotation, whatever the files say meanwhile. */
function staticKeyring(keys: KeyringKeys): Keyring {
  return { source: { kind: 'env', text: '', label: 'rotation', previousText: null }, keys: () => keys, fresh: () => keys };
}

/**
 * Re-seals every value not sealed with `to` (opened with `from`'s keys); call inside a transaction.
 * A value that does not open, or that another writer changed first, throws: the transaction
 * re-seals nothing. On PostgreSQL the compare-and-set of each row is what stops a second rotation
 * (another machine, its own key file): its UPDATE waits for the first one's commit, then finds the
 * row changed.
 */
async function resealEvery(store: SealedStore, from: KeyringKeys, to: SealingKey): Promise<number> {
  const box = keyringBox(staticKeyring({ current: to, previous: null }));
  const opener = keyringBox(staticKeyring(from));
  let count = 0;
  for (const value of await sealedValues(store)) {
    if (isForeign(value.sealed) || sealedWith(value.sealed) === to.id) continue;
    let plain: string;
    try {
      plain = opener.open(value.sealed);
    } catch (error) {
      throw new SecretKeyError(`${value.label} does not open with this node's keys, so nothing was re-sealed: ${(error as Error).message}`);
    }
    if (!(await value.reseal(box.seal(plain)))) throw new SecretKeyError(`${value.label} changed while it was being re-sealed; nothing was re-sealed: run the command again`);
    count++;
  }
  return count;
}

/** `secrets reseal`: every value under this node's current key, in one transaction. */
export async function resealStoredSecrets(target: SealedTarget, ring: Keyring): Promise<number> {
  return target.transaction(async (tx) => {
    const keys = ring.fresh();
    return resealEvery(tx, keys, keys.current);
  });
}

function refuseUnopened(check: CheckReport): void {
  if (check.failures.length === 0) return;
  const first = check.failures[0]!;
  const n = check.failures.length;
  throw new SecretKeyError(`${n} stored value${n === 1 ? '' : 's'} do${n === 1 ? 'es' : ''} not open with this node's keys, so nothing was changed (${first.label}: ${first.error}); run "npm run cli -- secrets check"`);
}

/**
 * `secrets rotate-key`, on either store. Every value is always under a key
 * on disk that this node reads (`<key file>` or `<key file>.old`):
 *  1. values not under the current key are re-sealed under it first, in a transaction, so the
 *     `.old` file may be replaced;
 *  2. in one transaction: every value is re-sealed under the new key, then the current key is
 *     written to `<key file>.old` and the new key to `<key file>` (each atomically), then commit.
 * The rows are written before the files: a re-seal refused (a value that does not open, a row
 * another rotation changed first) leaves the files as they were. A crash after the files and
 * before the commit leaves values under the old key, which `.old` opens.
 */
export async function rotateStoredKey(target: SealedTarget, ring: Keyring, given: SealingKey | null, hooks: RotationHooks = {}): Promise<RotationReport> {
  const source = ring.source;
  if (source.kind === 'env' && !given) {
    throw new SecretKeyError(`this node's key comes from ${source.label}, which this command cannot change: make a new key with "npm run cli -- secrets new-key FILE" and give it with --new-key-file FILE`);
  }
  const { before, foreign } = await target.transaction(async (tx) => {
    const keys = ring.fresh();
    const check = await checkStoredSecrets(tx, ring);
    refuseUnopened(check);
    await resealEvery(tx, keys, keys.current);
    return { before: keys, foreign: check.foreign };
  });
  await hooks.afterResealUnderCurrent?.();
  const to = given ?? newKey(source.kind === 'file' ? source.path : source.label);
  if (to.id === before.current.id) throw new SecretKeyError(`the new key is this node's key already (key ${to.id}); to re-seal every value under it run "npm run cli -- secrets reseal"`);
  let wrote: RotationReport['wrote'] = null;
  const resealed = await target.transaction(async (tx) => {
    if (ring.fresh().current.id !== before.current.id) throw new SecretKeyError(`the key changed while this rotation ran (another rotation?); nothing more was changed: run "npm run cli -- secrets check", then rotate again if needed`);
    const n = await resealEvery(tx, before, to);
    if (source.kind === 'file') {
      const previous = previousKeyPath(source.path);
      writeFileAtomic(previous, keyFileText(before.current.bytes));
      hooks.afterPreviousKeyWritten?.();
      writeFileAtomic(source.path, keyFileText(to.bytes));
      hooks.afterKeyFileWritten?.();
      wrote = { key: source.path, previous };
    }
    hooks.beforeCommit?.();
    return n;
  });
  return { from: before.current, to, resealed, foreign, wrote };
}
