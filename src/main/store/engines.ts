import type { Db } from './db.ts';
import { engineConfigSchema, type EngineConfig } from '../../shared/engine-config.ts';

export interface EngineRow {
  name: string;
  kind: 'openai';
  config: EngineConfig;
  /** Sealed with the secret box; only the engine factory opens it. */
  apiKeySealed: string | null;
  updatedAt: number;
}

interface Raw {
  name: string;
  kind: 'openai';
  config: string;
  api_key_sealed: string | null;
  updated_at: number;
}

const toRow = (r: Raw): EngineRow => ({
  name: r.name,
  kind: r.kind,
  config: engineConfigSchema.parse(JSON.parse(r.config)),
  apiKeySealed: r.api_key_sealed,
  updatedAt: r.updated_at,
});

export function engineQueries(db: Db) {
  const get = db.prepare('SELECT * FROM engines WHERE name = ?');
  const list = db.prepare('SELECT * FROM engines ORDER BY name');
  const upsert = db.prepare(
    `INSERT INTO engines (name, kind, config, api_key_sealed, created_at, updated_at) VALUES (?, 'openai', ?, ?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET config = excluded.config, api_key_sealed = coalesce(excluded.api_key_sealed, engines.api_key_sealed), updated_at = excluded.updated_at`,
  );
  const remove = db.prepare('DELETE FROM engines WHERE name = ?');
  const sealedKeys = db.prepare('SELECT name, api_key_sealed FROM engines WHERE api_key_sealed IS NOT NULL ORDER BY name');
  const reseal = db.prepare('UPDATE engines SET api_key_sealed = ? WHERE name = ? AND api_key_sealed = ?');
  return {
    get(name: string): EngineRow | undefined {
      const r = get.get(name) as Raw | undefined;
      return r && toRow(r);
    },
    list(): EngineRow[] {
      return (list.all() as unknown as Raw[]).map(toRow);
    },
    /** Saves an engine; a null key keeps the one already stored. */
    save(name: string, config: EngineConfig, apiKeySealed: string | null, now: number): void {
      upsert.run(name, JSON.stringify(config), apiKeySealed, now, now);
    },
    /** Every stored API key: what a rotation of the sealing key re-seals. */
    sealedKeys(): Array<{ name: string; sealed: string }> {
      return (sealedKeys.all() as Array<{ name: string; api_key_sealed: string }>).map((r) => ({ name: r.name, sealed: r.api_key_sealed }));
    },
    /** The same key sealed again (another sealing key); updated_at stays: the engine did not change. */
    resealKey(name: string, from: string, to: string): boolean {
      return reseal.run(to, name, from).changes > 0;
    },
    remove(name: string): boolean {
      return remove.run(name).changes > 0;
    },
  };
}
