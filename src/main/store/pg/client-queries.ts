import type pg from 'pg';
import { z } from 'zod';
import { clientSettingsSchema, type ClientSettings } from '../../../shared/client-settings.ts';
import { ACTIVE_SECRETS, type ClientRow, type SealedSecretRow, type SecretRow } from '../clients.ts';
import type { ClientAdminStore, ClientStore, StoreContract } from '../contract.ts';
import { int8, type PgQueryable } from './pool.ts';
import { inPgTransaction } from './transaction.ts';
import { pgEngineQueries } from './engine-queries.ts';

// The configuration mirror reads engines rows with it from here.
export { pgEngineRow } from './engine-queries.ts';

const clientSchema = z.object({ id: z.string(), enabled: z.number().int(), settings: z.unknown(), created_at: int8, updated_at: int8 });
const secretSchema = z.object({ id: int8, client_id: z.string(), sealed: z.string(), hint: z.string(), created_at: int8 });
const sealedSchema = z.object({ id: int8, client_id: z.string(), sealed: z.string(), hint: z.string(), retired_at: int8.nullable() });

/** A clients row as SQLite's toClient makes it; settings are jsonb here, parsed with the same schema. */
export function pgClientRow(raw: unknown): ClientRow {
  const r = clientSchema.parse(raw);
  const parsed = clientSettingsSchema.safeParse(r.settings);
  if (!parsed.success) throw new Error(`client ${r.id} has unreadable settings: ${parsed.error.message}`);
  return { id: r.id, enabled: r.enabled === 1, settings: parsed.data, createdAt: r.created_at, updatedAt: r.updated_at };
}

export function pgSecretRow(raw: unknown): SecretRow {
  const r = secretSchema.parse(raw);
  return { id: r.id, clientId: r.client_id, sealed: r.sealed, hint: r.hint, createdAt: r.created_at };
}

const CLIENT_COLUMNS = 'id, enabled, settings, created_at, updated_at';

/**
 * The clients group (clients.ts) on PostgreSQL: the same functions and results. Lists sort by byte
 * order (COLLATE "C"), as SQLite's ORDER BY does, whatever the database's collation. A new secret
 * locks its client's row first, so two rotations from two machines at once still leave two active
 * secrets, not three; a re-seal changes a secret only if it is still the one read.
 */
export function pgClientQueries(db: PgQueryable): StoreContract['clients'] {
  const changed = async (text: string, values: unknown[]): Promise<number> => (await db.query(text, values)).rowCount ?? 0;
  const activeSecrets = async (clientId: string): Promise<SecretRow[]> =>
    (await db.query('SELECT id, client_id, sealed, hint, created_at FROM client_secrets WHERE client_id = $1 AND retired_at IS NULL ORDER BY id DESC', [clientId])).rows.map(pgSecretRow);
  /** Retires the client's active secrets after the newest `keep`. */
  const retireBeyond = (clientId: string, keep: number, now: number): Promise<number> =>
    changed(
      `UPDATE client_secrets SET retired_at = $3 WHERE id IN (
         SELECT id FROM client_secrets WHERE client_id = $1 AND retired_at IS NULL ORDER BY id DESC OFFSET $2)`,
      [clientId, keep, now],
    );
  const lockClient = (clientId: string): Promise<number> => changed('SELECT 1 FROM clients WHERE id = $1 FOR UPDATE', [clientId]);
  return {
    async get(id: string): Promise<ClientRow | undefined> {
      const raw = (await db.query(`SELECT ${CLIENT_COLUMNS} FROM clients WHERE id = $1`, [id])).rows[0];
      return raw === undefined ? undefined : pgClientRow(raw);
    },
    async list(): Promise<ClientRow[]> {
      return (await db.query(`SELECT ${CLIENT_COLUMNS} FROM clients ORDER BY id COLLATE "C"`)).rows.map(pgClientRow);
    },
    async create(id: string, settings: ClientSettings, now: number): Promise<void> {
      await db.query('INSERT INTO clients (id, enabled, settings, created_at, updated_at) VALUES ($1, 1, $2::jsonb, $3, $3)', [id, JSON.stringify(settings), now]);
    },
    async setEnabled(id: string, enabled: boolean, now: number): Promise<boolean> {
      return (await changed('UPDATE clients SET enabled = $2, updated_at = $3 WHERE id = $1', [id, enabled ? 1 : 0, now])) > 0;
    },
    async setSettings(id: string, settings: ClientSettings, now: number): Promise<boolean> {
      return (await changed('UPDATE clients SET settings = $2::jsonb, updated_at = $3 WHERE id = $1', [id, JSON.stringify(settings), now])) > 0;
    },
    activeSecrets,
    async addSecret(clientId: string, sealed: string, hint: string, now: number): Promise<void> {
      await lockClient(clientId);
      await db.query('INSERT INTO client_secrets (client_id, sealed, hint, created_at) VALUES ($1, $2, $3, $4)', [clientId, sealed, hint, now]);
      await retireBeyond(clientId, ACTIVE_SECRETS, now);
    },
    async sealedSecrets(): Promise<SealedSecretRow[]> {
      return (await db.query('SELECT id, client_id, sealed, hint, retired_at FROM client_secrets ORDER BY id')).rows.map((raw) => {
        const r = sealedSchema.parse(raw);
        return { id: r.id, clientId: r.client_id, sealed: r.sealed, hint: r.hint, retired: r.retired_at !== null };
      });
    },
    async resealSecret(id: number, from: string, to: string): Promise<boolean> {
      return (await changed('UPDATE client_secrets SET sealed = $1 WHERE id = $2 AND sealed = $3', [to, id, from])) > 0;
    },
    async retireOlderSecrets(clientId: string, now: number): Promise<number> {
      await lockClient(clientId);
      return retireBeyond(clientId, 1, now);
    },
  };
}

/** Client administration's part of the store (ClientAdminStore) on PostgreSQL. */
export function pgClientAdminStore(db: PgQueryable): ClientAdminStore {
  const { get, list } = pgEngineQueries(db);
  return { clients: pgClientQueries(db), engines: { get, list } };
}

/** A ClientStore on a pool: each call on any connection, a transaction's calls on one (run again when it lost a race). */
export function pgClientStore(pool: pg.Pool): ClientStore {
  return { ...pgClientAdminStore(pool), inTransaction: (work) => inPgTransaction(pool, (tx) => work(pgClientAdminStore(tx))) };
}
