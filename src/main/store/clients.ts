import type { Db } from './db.ts';
import { clientSettingsSchema, type ClientSettings } from '../../shared/client-settings.ts';

export interface ClientRow {
  id: string;
  enabled: boolean;
  settings: ClientSettings;
  createdAt: number;
  updatedAt: number;
}

export interface SecretRow {
  id: number;
  clientId: string;
  sealed: string;
  hint: string;
  createdAt: number;
}

export interface SealedSecretRow {
  id: number;
  clientId: string;
  sealed: string;
  hint: string;
  retired: boolean;
}

interface RawClient {
  id: string;
  enabled: number;
  settings: string;
  created_at: number;
  updated_at: number;
}

function toClient(raw: RawClient): ClientRow {
  let settings: ClientSettings;
  try {
    settings = clientSettingsSchema.parse(JSON.parse(raw.settings));
  } catch (error) {
    throw new Error(`client ${raw.id} has unreadable settings: ${(error as Error).message}`, { cause: error });
  }
  return { id: raw.id, enabled: raw.enabled === 1, settings, createdAt: raw.created_at, updatedAt: raw.updated_at };
}

/** The two newest unretired secrets are active: two during a rotation, one otherwise. */
export const ACTIVE_SECRETS = 2;

export function clientQueries(db: Db) {
  const insert = db.prepare('INSERT INTO clients (id, enabled, settings, created_at, updated_at) VALUES (?, 1, ?, ?, ?)');
  const byId = db.prepare('SELECT * FROM clients WHERE id = ?');
  const all = db.prepare('SELECT * FROM clients ORDER BY id');
  const setEnabled = db.prepare('UPDATE clients SET enabled = ?, updated_at = ? WHERE id = ?');
  const setSettings = db.prepare('UPDATE clients SET settings = ?, updated_at = ? WHERE id = ?');
  const insertSecret = db.prepare('INSERT INTO client_secrets (client_id, sealed, hint, created_at) VALUES (?, ?, ?, ?)');
  const activeSecrets = db.prepare(
    'SELECT id, client_id, sealed, hint, created_at FROM client_secrets WHERE client_id = ? AND retired_at IS NULL ORDER BY id DESC',
  );
  const retire = db.prepare('UPDATE client_secrets SET retired_at = ? WHERE id = ?');
  const everySealed = db.prepare('SELECT id, client_id, sealed, hint, retired_at FROM client_secrets ORDER BY id');
  const reseal = db.prepare('UPDATE client_secrets SET sealed = ? WHERE id = ? AND sealed = ?');

  function secretsOf(clientId: string): SecretRow[] {
    return (activeSecrets.all(clientId) as Array<{ id: number; client_id: string; sealed: string; hint: string; created_at: number }>).map(
      (r) => ({ id: r.id, clientId: r.client_id, sealed: r.sealed, hint: r.hint, createdAt: r.created_at }),
    );
  }

  return {
    get(id: string): ClientRow | undefined {
      const raw = byId.get(id) as RawClient | undefined;
      return raw && toClient(raw);
    },
    list(): ClientRow[] {
      return (all.all() as unknown as RawClient[]).map(toClient);
    },
    create(id: string, settings: ClientSettings, now: number): void {
      insert.run(id, JSON.stringify(settings), now, now);
    },
    setEnabled(id: string, enabled: boolean, now: number): boolean {
      return setEnabled.run(enabled ? 1 : 0, now, id).changes > 0;
    },
    setSettings(id: string, settings: ClientSettings, now: number): boolean {
      return setSettings.run(JSON.stringify(settings), now, id).changes > 0;
    },
    activeSecrets: secretsOf,
    /** Adds a secret and retires the oldest ones beyond the two that stay active. */
    addSecret(clientId: string, sealed: string, hint: string, now: number): void {
      insertSecret.run(clientId, sealed, hint, now);
      for (const old of secretsOf(clientId).slice(ACTIVE_SECRETS)) retire.run(now, old.id);
    },
    /** Every stored secret, retired ones too: what a rotation of the sealing key re-seals. */
    sealedSecrets(): SealedSecretRow[] {
      return (everySealed.all() as Array<{ id: number; client_id: string; sealed: string; hint: string; retired_at: number | null }>).map((r) => ({
        id: r.id,
        clientId: r.client_id,
        sealed: r.sealed,
        hint: r.hint,
        retired: r.retired_at !== null,
      }));
    },
    /** The same secret sealed again (another key); false when the row changed meanwhile. */
    resealSecret(id: number, from: string, to: string): boolean {
      return reseal.run(to, id, from).changes > 0;
    },
    /** Ends a rotation early: only the newest secret stays active. */
    retireOlderSecrets(clientId: string, now: number): number {
      const extra = secretsOf(clientId).slice(1);
      for (const old of extra) retire.run(now, old.id);
      return extra.length;
    },
  };
}

export type ClientQueries = ReturnType<typeof clientQueries>;
