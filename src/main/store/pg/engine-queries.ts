import { z } from 'zod';
import { engineConfigSchema, type EngineConfig } from '../../../shared/engine-config.ts';
import type { StoreContract } from '../contract.ts';
import type { EngineRow } from '../engines.ts';
import { int8, type PgQueryable } from './pool.ts';

const engineSchema = z.object({ name: z.string(), kind: z.literal('openai'), config: z.unknown(), api_key_sealed: z.string().nullable(), updated_at: int8 });

/** An engines row as SQLite's toRow makes it; config is jsonb here, parsed with the same schema. */
export function pgEngineRow(raw: unknown): EngineRow {
  const r = engineSchema.parse(raw);
  return { name: r.name, kind: r.kind, config: engineConfigSchema.parse(r.config), apiKeySealed: r.api_key_sealed, updatedAt: r.updated_at };
}

const ENGINE_COLUMNS = 'name, kind, config, api_key_sealed, updated_at';

/**
 * The engines (engines.ts) on PostgreSQL: the same rows; names in byte order (COLLATE "C"), as
 * SQLite sorts, whatever the database's collation. A save keeps the stored key when given none
 * and the row's created_at, as SQLite's upsert does; a re-seal changes a key only if it is still
 * the one read (another node's rotation meanwhile wins), and leaves updated_at alone.
 */
export function pgEngineQueries(db: PgQueryable): StoreContract['engines'] {
  return {
    async get(name: string): Promise<EngineRow | undefined> {
      const raw = (await db.query(`SELECT ${ENGINE_COLUMNS} FROM engines WHERE name = $1`, [name])).rows[0];
      return raw === undefined ? undefined : pgEngineRow(raw);
    },
    async list(): Promise<EngineRow[]> {
      return (await db.query(`SELECT ${ENGINE_COLUMNS} FROM engines ORDER BY name COLLATE "C"`)).rows.map(pgEngineRow);
    },
    async save(name: string, config: EngineConfig, apiKeySealed: string | null, now: number): Promise<void> {
      await db.query(
        `INSERT INTO engines (name, kind, config, api_key_sealed, created_at, updated_at) VALUES ($1, 'openai', $2::jsonb, $3, $4, $4)
         ON CONFLICT (name) DO UPDATE SET config = excluded.config, api_key_sealed = coalesce(excluded.api_key_sealed, engines.api_key_sealed), updated_at = excluded.updated_at`,
        [name, JSON.stringify(config), apiKeySealed, now],
      );
    },
    async sealedKeys(): Promise<Array<{ name: string; sealed: string }>> {
      const r = await db.query('SELECT name, api_key_sealed FROM engines WHERE api_key_sealed IS NOT NULL ORDER BY name COLLATE "C"');
      return r.rows.map((raw) => {
        const k = z.object({ name: z.string(), api_key_sealed: z.string() }).parse(raw);
        return { name: k.name, sealed: k.api_key_sealed };
      });
    },
    async resealKey(name: string, from: string, to: string): Promise<boolean> {
      return ((await db.query('UPDATE engines SET api_key_sealed = $1 WHERE name = $2 AND api_key_sealed = $3', [to, name, from])).rowCount ?? 0) > 0;
    },
    async remove(name: string): Promise<boolean> {
      return ((await db.query('DELETE FROM engines WHERE name = $1', [name])).rowCount ?? 0) > 0;
    },
  };
}
