import { join } from 'node:path';
import { z } from 'zod';
import type { OsKeychain } from '../auth/secret-box.ts';
import { readJsonFile, removeFile, writeJsonFile } from './json-file.ts';
import { TeamClientError } from './team-client-error.ts';

export const SESSION_FILE = 'team-session.json';

/** Electron's safeStorage as far as the session store uses it (injected: tests give their own). */
export interface SessionKeychain extends OsKeychain {
  /** Linux: which secret store encrypts; `basic_text` is a key written in Chromium's source, no secret at all. */
  getSelectedStorageBackend?(): string;
}

const sessionFile = z.object({ origin: z.string().url(), sealed: z.string().min(1) });

/** Why a session token is not remembered, or null when it can be. */
export function cannotEncrypt(keychain: SessionKeychain): string | null {
  if (!keychain.isEncryptionAvailable()) return 'this computer offers no encrypted storage (no keychain or secret service): the session is not remembered, so you will sign in again when the app restarts';
  if (keychain.getSelectedStorageBackend?.() === 'basic_text') return 'this computer\'s secret store is "basic_text" (no keyring running): the session is not remembered, so you will sign in again when the app restarts';
  return null;
}

/**
 * The team server session's token, kept between runs only encrypted by the operating system's
 * keychain (Electron safeStorage), in <data>/team-session.json. Without encryption it is not
 * written at all: a bearer token in a plain file is the account for whoever reads it.
 */
export function createSessionStore(dataDir: string, keychain: SessionKeychain) {
  const file = join(dataDir, SESSION_FILE);
  return {
    /** Throws TeamClientError('encryption_unavailable') rather than writing the token in the clear. */
    save(origin: string, token: string): void {
      const refusal = cannotEncrypt(keychain);
      if (refusal) {
        removeFile(file);
        throw new TeamClientError('encryption_unavailable', refusal);
      }
      writeJsonFile(file, { origin, sealed: keychain.encryptString(token).toString('base64') });
    },
    /** The kept token for this origin, or null (none, another server's, or it no longer decrypts). */
    load(origin: string): string | null {
      const kept = readJsonFile(file, sessionFile);
      if (!kept || kept.origin !== origin || cannotEncrypt(keychain)) return null;
      try {
        return keychain.decryptString(Buffer.from(kept.sealed, 'base64'));
      } catch {
        // Another user's keychain, or a reset one: the token is lost, sign in again.
        removeFile(file);
        return null;
      }
    },
    clear(): void {
      removeFile(file);
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
