import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ensurePrivateDir, ensurePrivateFile } from '../store/data-dir.ts';

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
 * AES-256-GCM with a random key kept in a 0600 file beside the database. It protects copies of
 * the database (backups, support bundles) that do not include the key file; it does not protect
 * against someone who can read the whole data folder. The desktop app uses the OS keychain instead.
 */
export function keyFileBox(keyPath: string): SecretBox {
  const key = readOrCreateKey(keyPath);
  return {
    scheme: 'keyfile',
    seal(secret) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return `keyfile:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
    },
    open(sealed) {
      if (!sealed.startsWith('keyfile:')) throw new SecretBoxError(`not a key-file secret (sealed with "${sealed.split(':', 1)[0]}")`);
      const raw = Buffer.from(sealed.slice('keyfile:'.length), 'base64url');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
        decipher.setAuthTag(raw.subarray(12, 28));
        return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretBoxError(`cannot decrypt a client secret with ${keyPath}: wrong or replaced key file`);
      }
    },
  };
}

function readOrCreateKey(keyPath: string): Buffer {
  if (existsSync(keyPath)) {
    const key = Buffer.from(readFileSync(keyPath, 'utf8').trim(), 'base64url');
    if (key.length !== 32) throw new SecretBoxError(`${keyPath} is not a 32-byte key; restore it from backup`);
    return key;
  }
  ensurePrivateDir(dirname(keyPath));
  const key = randomBytes(32);
  // Exclusive create: if another process (the CLI) made the key meanwhile, this throws rather than replacing it.
  if (!ensurePrivateFile(keyPath, key.toString('base64url') + '\n')) throw new SecretBoxError(`${keyPath} appeared while it was being created; run the command again`);
  return key;
}

/**
 * HMAC-SHA256 of `message` under the key file's key, so other secrets (the console token) can be
 * derived from it and re-derived after a restart without ever being stored, and without the key
 * itself leaving this module. Give every use its own `message` prefix.
 */
export function keyFileHmac(keyPath: string, message: string): Buffer {
  return createHmac('sha256', readOrCreateKey(keyPath)).update(message, 'utf8').digest();
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
