import type { Db } from './db.ts';
import { operatorSchema, type Operator } from '../../shared/console-workspace.ts';

/** The console user's identity: one per install, like the console itself. */
export const OPERATOR_SETTING = 'operator';

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
    /** The operator, checked as it is read back: a hand-edited value counts as not set. */
    operator(): Operator | null {
      const raw = get.get(OPERATOR_SETTING) as { value: string } | undefined;
      if (!raw) return null;
      try {
        const parsed = operatorSchema.safeParse(JSON.parse(raw.value));
        return parsed.success ? parsed.data : null;
      } catch {
        return null;
      }
    },
    putOperator(operator: Operator): void {
      put.run(OPERATOR_SETTING, JSON.stringify(operatorSchema.parse(operator)));
    },
    /** Changes whenever another connection (the CLI) commits: the cue to reload cached clients. */
    dataVersion(): number {
      return (dataVersion.get() as { data_version: number }).data_version;
    },
  };
}
