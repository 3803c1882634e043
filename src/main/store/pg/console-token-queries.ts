import type { PgQueryable } from './pool.ts';

/**
 * The console token's stored record on PostgreSQL, where several nodes start at once: the first
 * record written wins and every node reads it back, so all of them derive the same token from
 * the shared key and print the same console URL (console-api/console-token.ts).
 */
export function pgConsoleTokenQueries(db: PgQueryable) {
  return {
    /** Writes `value` under `key` unless a value is there already; returns the value stored now. */
    async putIfAbsent(key: string, value: string): Promise<string> {
      await db.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [key, value]);
      const r = await db.query<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key]);
      return r.rows[0]?.value ?? value;
    },
  };
}
