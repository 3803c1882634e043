import type pg from 'pg';
import { z } from 'zod';
import { int8 } from './pool.ts';
import type { EngineConfig } from '../../../shared/engine-config.ts';
import type { EnginesCliStore } from '../contract.ts';
import { phrasingsSchema } from '../kb.ts';
import { pgClientAdminStore } from './client-queries.ts';

const kbSchema = z.object({ id: int8, question: z.string(), answer: z.string(), phrasings: phrasingsSchema });

/**
 * `engines add | list | test | remove` on PostgreSQL: the results of engines.ts on SQLite. get and
 * list are client administration's (config jsonb read back through engineConfigSchema, names in
 * byte order); a save keeps the stored key when given none and the row's created_at, as SQLite's
 * upsert does. Every node's configuration mirror sees a change within a second.
 */
export function pgEnginesCliStore(pool: pg.Pool): EnginesCliStore {
  const { get, list } = pgClientAdminStore(pool).engines;
  return {
    engines: {
      get,
      list,
      async save(name: string, config: EngineConfig, apiKeySealed: string | null, now: number): Promise<void> {
        await pool.query(
          `INSERT INTO engines (name, kind, config, api_key_sealed, created_at, updated_at) VALUES ($1, 'openai', $2::jsonb, $3, $4, $4)
           ON CONFLICT (name) DO UPDATE SET config = excluded.config, api_key_sealed = coalesce(excluded.api_key_sealed, engines.api_key_sealed), updated_at = excluded.updated_at`,
          [name, JSON.stringify(config), apiKeySealed, now],
        );
      },
      async remove(name: string): Promise<boolean> {
        return ((await pool.query('DELETE FROM engines WHERE name = $1', [name])).rowCount ?? 0) > 0;
      },
    },
    kbEntries: async () => (await pool.query('SELECT id, question, answer, phrasings FROM kb_entries ORDER BY id')).rows.map((r) => kbSchema.parse(r)),
  };
}
