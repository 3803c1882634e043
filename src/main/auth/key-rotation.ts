import type { Store } from '../store/index.ts';
import { keyringBox, sealedFormat, type Keyring, type KeyringKeys } from './secret-box.ts';
import { keyFileText, newKey, previousKeyPath, SecretKeyError, writeFileAtomic, type SealingKey } from './sealing-key.ts';

/** One stored sealed value: a client secret (retired ones too) or an engine's API key. */
interface SealedValue {
  label: string;
  sealed: string;
  /** Writes the value sealed again; false when the row changed meanwhile. */
  reseal(to: string): boolean;
}

function sealedValues(store: Store): SealedValue[] {
  return [
    ...store.clients.sealedSecrets().map((s) => ({
      label: `client ${s.clientId} secret …${s.hint}${s.retired ? ' (retired)' : ''}`,
      sealed: s.sealed,
      reseal: (to: string) => store.clients.resealSecret(s.id, s.sealed, to),
    })),
    ...store.engines.sealedKeys().map((k) => ({
      label: `engine ${k.name} API key`,
      sealed: k.sealed,
      reseal: (to: string) => store.engines.resealKey(k.name, k.sealed, to),
    })),
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
  return checkSealed(sealedValues(store), ring);
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
  /** After step 1 committed, before step 2 takes the lock again. */
  afterResealUnderCurrent?(): void;
  afterPreviousKeyWritten?(): void;
  afterKeyFileWritten?(): void;
  /** Inside the transaction, after every value was re-sealed. */
  beforeCommit?(): void;
}

/**
 * Re-seals every value not sealed with `to` (opened with `from`'s keys); call inside a transaction.
 * A value that does not open throws, so the transaction re-seals nothing.
 */
function resealEvery(store: Store, from: KeyringKeys, to: SealingKey): number {
  const box = keyringBox(staticKeyring({ current: to, previous: null }));
  const opener = keyringBox(staticKeyring(from));
  let count = 0;
  for (const value of sealedValues(store)) {
    if (isForeign(value.sealed) || sealedWith(value.sealed) === to.id) continue;
    let plain: string;
    try {
      plain = opener.open(value.sealed);
    } catch (error) {
      throw new SecretKeyError(`${value.label} does not open with this node's keys, so nothing was re-sealed: ${(error as Error).message}`);
    }
    if (!value.reseal(box.seal(plain))) throw new SecretKeyError(`${value.label} changed while it was being re-sealed; nothing was re-sealed: run the command again`);
    count++;
  }
  return count;
}

/** `secrets reseal`: every value under this node's current key (after the key was changed by hand on every node). */
export function resealSecrets(store: Store, ring: Keyring): number {
  return store.transaction(() => {
    const keys = ring.fresh();
    return resealEvery(store, keys, keys.current);
  });
}

function refuseUnopened(check: CheckReport): void {
  if (check.failures.length === 0) return;
  const first = check.failures[0]!;
  const n = check.failures.length;
  throw new SecretKeyError(`${n} stored value${n === 1 ? '' : 's'} do${n === 1 ? 'es' : ''} not open with this node's keys, so nothing was changed (${first.label}: ${first.error}); run "npm run cli -- secrets check"`);
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

/**
 * `secrets rotate-key`. The order makes every crash safe, since every value is always under a key
 * on disk that this node reads (`<key file>` or `<key file>.old`):
 *  1. values not under the current key (the older format, or the previous key) are re-sealed
 *     under it first, in a transaction, so the `.old` file may be replaced (a rotation may follow
 *     an interrupted one);
 *  2. the current key is written to `<key file>.old` (atomically: temp file, fsync, rename);
 *  3. the new key replaces `<key file>` (the same way);
 *  4. every value is re-sealed under the new key in one transaction.
 * Steps 2 to 4 are one transaction: another rotation waits for its lock, then finds the new key
 * files (and if it began before, sees the key changed and stops). A crash before 4 commits leaves
 * values under the old key, which `.old` opens; after, under the new one. `.old` stays until the operator removes it (`secrets check` says when nothing needs it):
 * a process that read the old key may still seal one value with it. When the key comes from the
 * environment nothing is written: the new key must already be in a file (`newKey`), and the
 * operator changes the variable.
 */
export function rotateKey(store: Store, ring: Keyring, given: SealingKey | null, hooks: RotationHooks = {}): RotationReport {
  const source = ring.source;
  if (source.kind === 'env' && !given) {
    throw new SecretKeyError(`this node's key comes from ${source.label}, which this command cannot change: make a new key with "npm run cli -- secrets new-key FILE" and give it with --new-key-file FILE`);
  }
  // Each step reads the key files while it holds the database's write lock, so a second rotation
  // (another shell, another node) waits for it and then sees its files, never half of them.
  const { before, foreign } = store.transaction(() => {
    const keys = ring.fresh();
    const check = checkSecrets(store, ring);
    refuseUnopened(check);
    resealEvery(store, keys, keys.current);
    return { before: keys, foreign: check.foreign };
  });
  hooks.afterResealUnderCurrent?.();
  const to = given ?? newKey(source.kind === 'file' ? source.path : source.label);
  if (to.id === before.current.id) throw new SecretKeyError(`the new key is this node's key already (key ${to.id}); to re-seal every value under it run "npm run cli -- secrets reseal"`);
  let wrote: RotationReport['wrote'] = null;
  const resealed = store.transaction(() => {
    if (ring.fresh().current.id !== before.current.id) throw new SecretKeyError(`the key changed while this rotation ran (another rotation?); nothing more was changed: run "npm run cli -- secrets check", then rotate again if needed`);
    if (source.kind === 'file') {
      const previous = previousKeyPath(source.path);
      writeFileAtomic(previous, keyFileText(before.current.bytes));
      hooks.afterPreviousKeyWritten?.();
      writeFileAtomic(source.path, keyFileText(to.bytes));
      hooks.afterKeyFileWritten?.();
      wrote = { key: source.path, previous };
    }
    const n = resealEvery(store, before, to);
    hooks.beforeCommit?.();
    return n;
  });
  return { from: before.current, to, resealed, foreign, wrote };
}

/** Keys fixed for one step of a rotation, whatever the files say meanwhile. */
function staticKeyring(keys: KeyringKeys): Keyring {
  return { source: { kind: 'env', text: '', label: 'rotation' }, keys: () => keys, fresh: () => keys };
}
