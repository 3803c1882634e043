import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { assertNever } from '../../shared/assert-never.ts';
import { keyHmac, loadKey, loadPreviousKey, previousKeyPath, type KeySource, type SealingKey } from './sealing-key.ts';

/**
 * Seals client secrets at rest. Each sealed value names its scheme, so a database written by the
 * desktop app (Electron safeStorage) and by the headless CLI (key file) can hold both kinds.
 */
export interface SecretBox {
  readonly scheme: string;
  seal(secret: string): string;
  open(sealed: string): string;
}

export class SecretBoxError extends Error {}

/** Opens values sealed by any of `boxes`, seals with the first. */
export function combinedBox(boxes: readonly SecretBox[]): SecretBox {
  const primary = boxes[0];
  if (!primary) throw new Error('at least one secret box is required');
  return {
    scheme: primary.scheme,
    seal: (secret) => primary.seal(secret),
    open(sealed) {
      const scheme = sealed.slice(0, sealed.indexOf(':'));
      const box = boxes.find((b) => b.scheme === scheme);
      if (!box) throw new SecretBoxError(`secret sealed with "${scheme}", which this process cannot open`);
      return box.open(sealed);
    },
  };
}

/**
 * AES-256-GCM with a key shared by every node (sealing-key.ts: the data folder's 0600 `secret.key`,
 * or a key named by flag, environment or config.json). It protects copies of the database (backups,
 * support bundles) that do not include the key; it does not protect against someone who can read
 * the key. The desktop app uses the OS keychain instead.
 *
 * Formats: `keyfile:v2:<key id>:<base64url iv|tag|ciphertext>` (the key id, also the GCM
 * additional data with the prefix, says which key sealed it), and the older `keyfile:<base64url
 * iv|tag|ciphertext>`, which still opens.
 */
export function keyringBox(ring: Keyring): SecretBox & { keyId(): string } {
  return {
    scheme: 'keyfile',
    keyId: () => ring.keys().current.id,
    seal(secret) {
      const key = ring.fresh().current;
      const header = `keyfile:v2:${key.id}`;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key.bytes, iv);
      cipher.setAAD(Buffer.from(header, 'utf8'));
      const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return `${header}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
    },
    open(sealed) {
      const format = sealedFormat(sealed);
      switch (format.kind) {
        case 'other':
          throw new SecretBoxError(`not a key-file secret (sealed with "${format.scheme}")`);
        case 'v2': {
          // Another process may have rotated the key file since this one read it.
          const key = findKey(ring.keys(), format.keyId) ?? findKey(ring.fresh(), format.keyId);
          if (!key) throw new SecretBoxError(`secret sealed with key ${format.keyId}, ${describeKeys(ring.keys())}: every node must share one key; see docs/operations.md, "Secret key"`);
          const plain = decrypt(key.bytes, format.raw, Buffer.from(`keyfile:v2:${key.id}`, 'utf8'));
          if (plain === null) throw new SecretBoxError(`secret sealed with key ${key.id} does not decrypt with that key: the stored value is damaged`);
          return plain;
        }
        case 'v1': {
          const tryAll = (keys: KeyringKeys) => [keys.current, keys.previous].map((k) => k && decrypt(k.bytes, format.raw, null)).find((p) => typeof p === 'string');
          const plain = tryAll(ring.keys()) ?? tryAll(ring.fresh());
          if (plain === undefined || plain === null) throw new SecretBoxError(`cannot decrypt a secret sealed before key ids (an older version): ${describeKeys(ring.keys())}, neither opens it: wrong or replaced key; every node must share one key; see docs/operations.md, "Secret key"`);
          return plain;
        }
        default:
          return assertNever(format);
      }
    },
  };
}

export type SealedFormat = { kind: 'v2'; keyId: string; raw: Buffer } | { kind: 'v1'; raw: Buffer } | { kind: 'other'; scheme: string };

/** What a stored value says about how it was sealed (for messages and `secrets check`). */
export function sealedFormat(sealed: string): SealedFormat {
  if (!sealed.startsWith('keyfile:')) return { kind: 'other', scheme: sealed.split(':', 1)[0] ?? '' };
  const rest = sealed.slice('keyfile:'.length);
  const v2 = /^v2:([0-9a-f]{8}):([A-Za-z0-9_-]*)$/.exec(rest);
  if (v2) return { kind: 'v2', keyId: v2[1]!, raw: Buffer.from(v2[2]!, 'base64url') };
  return { kind: 'v1', raw: Buffer.from(rest, 'base64url') };
}

function decrypt(key: Buffer, raw: Buffer, aad: Buffer | null): string | null {
  if (raw.length < 28) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    if (aad) decipher.setAAD(aad);
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

export interface KeyringKeys {
  current: SealingKey;
  /** The key before the last rotation (`<key file>.old`): opens, never seals. */
  previous: SealingKey | null;
}

/** The keys of one source: `keys()` as last read, `fresh()` re-read first if the files changed. */
export interface Keyring {
  readonly source: KeySource;
  keys(): KeyringKeys;
  fresh(): KeyringKeys;
}

function findKey(keys: KeyringKeys, id: string): SealingKey | undefined {
  return [keys.current, keys.previous].find((k): k is SealingKey => k !== null && k.id === id);
}

function describeKeys(keys: KeyringKeys): string {
  const previous = keys.previous ? ` and its previous key ${keys.previous.id} (${keys.previous.source})` : '';
  return `this node has key ${keys.current.id} (${keys.current.source})${previous}`;
}

/** Reads a source's keys; a file source is read again when its key file or `.old` file changes. */
export function openKeyring(source: KeySource): Keyring {
  const stamp = (): string => {
    if (source.kind === 'env') return '';
    return [source.path, previousKeyPath(source.path)].map((p) => {
      try {
        const s = statSync(p);
        return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
      } catch {
        return '-';
      }
    }).join('|');
  };
  const read = (): KeyringKeys => ({ current: loadKey(source), previous: loadPreviousKey(source) });
  let keys = read();
  let seen = stamp();
  return {
    source,
    keys: () => keys,
    fresh() {
      const now = stamp();
      if (now !== seen) {
        keys = read();
        seen = now;
      }
      return keys;
    },
  };
}

/** The data folder's key file (created on first use) as a box: what the desktop app and tests use. */
export function keyFileBox(keyPath: string): SecretBox & { keyId(): string } {
  return keyringBox(openKeyring({ kind: 'file', path: keyPath, label: keyPath, createIfMissing: true }));
}

/**
 * HMAC-SHA256 of `message` under a key (or the key file at a path), so other secrets (the console
 * token) can be derived from it and re-derived after a restart without ever being stored, and
 * without the key itself leaving these modules. Give every use its own `message` prefix.
 */
export function keyFileHmac(key: string | Keyring, message: string): Buffer {
  const ring = typeof key === 'string' ? openKeyring({ kind: 'file', path: key, label: key, createIfMissing: true }) : key;
  return keyHmac(ring.keys().current, message);
}

/** At least 32 random bytes, base64url (section 3). */
export function generateSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The part of Electron's safeStorage we use; typed here so this module never imports electron. */
export interface OsKeychain {
  isEncryptionAvailable(): boolean;
  encryptString(plain: string): Buffer;
  decryptString(encrypted: Buffer): string;
}

/** Secrets sealed by the OS keychain (Keychain, DPAPI, libsecret) through Electron's safeStorage. */
export function keychainBox(keychain: OsKeychain): SecretBox {
  return {
    scheme: 'keychain',
    seal: (secret) => `keychain:${keychain.encryptString(secret).toString('base64url')}`,
    open: (sealed) => keychain.decryptString(Buffer.from(sealed.slice('keychain:'.length), 'base64url')),
  };
}
