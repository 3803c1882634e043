import type { ClientStore } from '../store/contract.ts';
import type { ClientSettings } from '../../shared/client-settings.ts';
import { generateSecret, type SecretBox } from './secret-box.ts';

export const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export class ClientAdminError extends Error {
  readonly code: 'invalid_input' | 'conflict' | 'not_found';
  constructor(code: ClientAdminError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

function checkedSecret(secret: string | undefined): string {
  if (secret === undefined) return generateSecret();
  if (Buffer.byteLength(secret, 'utf8') < 32) throw new ClientAdminError('invalid_input', 'a secret must be at least 32 bytes; leave it out to have a random one generated');
  return secret;
}

/**
 * Client operations shared by the CLI and the console, on either store (each call awaited: a
 * PostgreSQL store's results are promises); each returns a new secret where it makes one.
 */
export function clientAdmin(store: ClientStore, box: SecretBox) {
  return {
    async add(id: string, settings: ClientSettings, now: number, secret?: string): Promise<string> {
      if (!CLIENT_ID.test(id)) throw new ClientAdminError('invalid_input', `client ID "${id}" must be 1..128 characters of A-Z a-z 0-9 . _ : -`);
      const value = checkedSecret(secret);
      await store.inTransaction(async (tx) => {
        if (await tx.clients.get(id)) throw new ClientAdminError('conflict', `client "${id}" already exists; rotate its secret instead`);
        await tx.clients.create(id, settings, now);
        await tx.clients.addSecret(id, box.seal(value), value.slice(-4), now);
      });
      return value;
    },
    async rotate(id: string, now: number, retirePrevious: boolean, secret?: string): Promise<{ secret: string; retired: number }> {
      const value = checkedSecret(secret);
      const retired = await store.inTransaction(async (tx) => {
        if (!(await tx.clients.get(id))) throw new ClientAdminError('not_found', `no client "${id}"`);
        await tx.clients.addSecret(id, box.seal(value), value.slice(-4), now);
        return retirePrevious ? await tx.clients.retireOlderSecrets(id, now) : 0;
      });
      return { secret: value, retired };
    },
    async setEnabled(id: string, enabled: boolean, now: number): Promise<void> {
      if (!(await store.clients.setEnabled(id, enabled, now))) throw new ClientAdminError('not_found', `no client "${id}"`);
    },
    async setSettings(id: string, settings: ClientSettings, now: number): Promise<void> {
      if (!(await store.clients.setSettings(id, settings, now))) throw new ClientAdminError('not_found', `no client "${id}"`);
    },
  };
}
