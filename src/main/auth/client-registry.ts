import type { KeyObject } from 'node:crypto';
import type { Store } from '../store/index.ts';
import type { ClientSettings } from '../../shared/client-settings.ts';
import { hmacKey } from './signature.ts';
import type { SecretBox } from './secret-box.ts';

/** What the registry reads: the SQLite store, or a PostgreSQL node's in-memory copy (store/pg/config-mirror.ts). */
export interface RegistrySource {
  clients: Pick<Store['clients'], 'list' | 'activeSecrets'>;
  settings: Pick<Store['settings'], 'dataVersion'>;
}

export interface ActiveClient {
  id: string;
  enabled: boolean;
  settings: ClientSettings;
  /** Newest first; the first also signs outgoing deliveries. */
  keys: KeyObject[];
}

/** How stale the cache may get: a client disabled from the CLI is refused within this time. */
export const REFRESH_INTERVAL_MS = 1000;

/**
 * Clients with their HMAC key objects, kept in memory because verifying a signature is on every
 * request's path. The CLI may change clients while the server runs: at most once a second, and
 * at once when a client is unknown or a signature fails (a new client or a rotated secret),
 * SQLite's data_version tells whether another connection committed, and only then is the cache
 * rebuilt. Asking on every request cost more than the HMAC itself under load.
 */
export function createClientRegistry(store: RegistrySource, box: SecretBox, warn: (message: string) => void = () => {}) {
  let cache = new Map<string, ActiveClient>();
  let version = -1;
  let checkedAt = -Infinity;
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

  function refresh(now: number): void {
    checkedAt = now;
    const v = store.settings.dataVersion();
    if (v !== version) {
      version = v;
      rebuild();
    }
  }

  return {
    lookup(id: string, now: number): ActiveClient | undefined {
      if (now - checkedAt >= REFRESH_INTERVAL_MS || !cache.has(id)) refresh(now);
      return cache.get(id);
    },
    /** After a signature failed: the client may have rotated its secret a moment ago. */
    recheck(id: string, now: number): ActiveClient | undefined {
      refresh(now);
      return cache.get(id);
    },
    /** Call after this process changed clients itself (data_version only sees other connections). */
    invalidate(): void {
      version = -1;
      // The next lookup rebuilds, however recently the cache was checked: a send_url set in the
      // console shows in the transcript it reloads at once, not a second later.
      checkedAt = -Infinity;
    },
  };
}

export type ClientRegistry = ReturnType<typeof createClientRegistry>;
