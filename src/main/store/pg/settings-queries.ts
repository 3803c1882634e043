import type { StoreContract } from '../contract.ts';
import { int8, type PgQueryable } from './pool.ts';

/**
 * What dataVersion stands for. SQLite's PRAGMA data_version moves when another connection (the
 * CLI) commits; its one caller, the client registry (auth/client-registry.ts), reads it at most
 * once a second to know whether to rebuild its clients and their keys. PostgreSQL has no such
 * counter per database that a query sees at once (pg_stat_database lags and is cached for the
 * transaction), and a counter of our own would need a trigger on every table. So the version is
 * a fingerprint of the content the registry and the configuration mirror (pg/config-mirror.ts)
 * cache: clients, their secrets, engines and settings. It moves whenever any of them changes, on
 * whichever node or CLI changed it (this node's own changes included, unlike data_version: one
 * rebuild more, never one less); it is the same on every node; and an edit undone before the next
 * look reads as no change, which is right for a cache of that content. 52 bits of an md5: a safe
 * integer, and a collision (a change that leaves the number as it was) has odds of 2^-52.
 */
const FINGERPRINT = `SELECT ('x' || substr(md5(concat(
    (SELECT string_agg(t::text, ',' ORDER BY t.id COLLATE "C") FROM clients t), '|',
    (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM client_secrets t), '|',
    (SELECT string_agg(t::text, ',' ORDER BY t.name COLLATE "C") FROM engines t), '|',
    (SELECT string_agg(t::text, ',' ORDER BY t.key COLLATE "C") FROM settings t))), 1, 13))::bit(52)::bigint AS v`;

/** The settings group (store/settings.ts) on PostgreSQL: the same functions; dataVersion as said above. */
export function pgSettingsQueries(db: PgQueryable): StoreContract['settings'] {
  return {
    async get(key: string): Promise<string | undefined> {
      return ((await db.query('SELECT value FROM settings WHERE key = $1', [key])).rows[0] as { value: string } | undefined)?.value;
    },
    async put(key: string, value: string): Promise<void> {
      await db.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value', [key, value]);
    },
    async delete(key: string): Promise<void> {
      await db.query('DELETE FROM settings WHERE key = $1', [key]);
    },
    dataVersion: async () => int8.parse((await db.query(FINGERPRINT)).rows[0].v),
  };
}
