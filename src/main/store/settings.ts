import type { Db } from './db.ts';

/** Small server-wide values that must survive restarts (the console token, for one). */
export function settingsQueries(db: Db) {
  const get = db.prepare('SELECT value FROM settings WHERE key = ?');
  const put = db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  const remove = db.prepare('DELETE FROM settings WHERE key = ?');
  const dataVersion = db.prepare('PRAGMA data_version');
  return {
    get(key: string): string | undefined {
      return (get.get(key) as { value: string } | undefined)?.value;
    },
    put(key: string, value: string): void {
      put.run(key, value);
    },
    delete(key: string): void {
      remove.run(key);
    },
    /** Changes whenever another connection (the CLI) commits: the cue to reload cached clients. */
    dataVersion(): number {
      return (dataVersion.get() as { data_version: number }).data_version;
    },
  };
}
