import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SessionKeychain } from './session-store.ts';

// For tests (session-store.test.ts, test/team-server-desktop-flow.test.ts); not imported by the app.

/** A keychain like Electron's safeStorage: real encryption under a key only it holds. */
export function fakeKeychain(options: { available?: boolean; backend?: string } = {}): SessionKeychain & { key: Buffer } {
  const key = randomBytes(32);
  return {
    key,
    isEncryptionAvailable: () => options.available ?? true,
    getSelectedStorageBackend: () => options.backend ?? 'gnome_libsecret',
    encryptString(plain) {
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
      return Buffer.concat([iv, c.getAuthTag(), body]);
    },
    decryptString(sealed) {
      const d = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
      d.setAuthTag(sealed.subarray(12, 28));
      return Buffer.concat([d.update(sealed.subarray(28)), d.final()]).toString('utf8');
    },
  };
}
