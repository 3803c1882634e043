import type { KeyObject } from 'node:crypto';
import type { Store } from '../store/index.ts';
import type { ClientSettings } from '../../shared/client-settings.ts';
import { hmacKey } from './signature.ts';
import type { SecretBox } from './secret-box.ts';

export interface ActiveClient {
  id: string;
  enabled: boolean;
  settings: ClientSettings;
  /** Newest first; the first also signs outgoing deliveries. */
  keys: KeyObject[];
}

/**
 * Clients with their HMAC key objects, kept in memory because verifying a signature is on every
 * request's path. The CLI may change clients while the server runs; SQLite's data_version tells
 * us when another connection committed, and only then is the cache rebuilt.
 */
export function createClientRegistry(store: Store, box: SecretBox, warn: (message: string) => void = () => {}) {
  let cache = new Map<string, ActiveClient>();
  let version = -1;
  const warned = new Set<number>();

  function rebuild(): void {
    const next = new Map<string, ActiveClient>();
    for (const client of store.clients.list()) {
      const keys: KeyObject[] = [];
      for (const secret of store.clients.activeSecrets(client.id)) {
        try {
          keys.push(hmacKey(box.open(secret.sealed)));
        } catch (error) {
          if (!warned.has(secret.id)) warn(`client ${client.id}: secret ${secret.hint}… unusable: ${(error as Error).message}`);
          warned.add(secret.id);
        }
      }
      next.set(client.id, { id: client.id, enabled: client.enabled, settings: client.settings, keys });
    }
    cache = next;
  }

  function refresh(): void {
    const v = store.settings.dataVersion();
    if (v !== version) {
      version = v;
      rebuild();
    }
  }

  return {
    lookup(id: string): ActiveClient | undefined {
      refresh();
      return cache.get(id);
    },
    /** Call after this process changed clients itself (data_version only sees other connections). */
    invalidate(): void {
      version = -1;
    },
  };
}

export type ClientRegistry = ReturnType<typeof createClientRegistry>;
