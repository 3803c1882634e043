import type { DatabaseSync } from 'node:sqlite';
import { MIGRATIONS } from './migrations/index.ts';

export interface Migration {
  version: number;
  name: string;
  /**
   * Rebuilds a table that others reference (SQLite cannot alter a CHECK): foreign keys are off
   * while it runs, as SQLite's own procedure says, and fully checked before it commits.
   */
  rebuildsReferencedTable?: boolean;
  up(db: DatabaseSync): void;
}

export function schemaVersion(db: DatabaseSync): number {
  const row = db.prepare('PRAGMA user_version').get() as { user_version: number };
  return row.user_version;
}

/**
 * Applies each pending numbered migration in its own transaction, so a failure leaves the
 * database at the last good version. A database newer than this build is refused rather than
 * written to by code that does not know its schema.
 */
export function migrate(db: DatabaseSync, migrations: readonly Migration[] = MIGRATIONS, target?: number): number {
  const latest = migrations.at(-1)?.version ?? 0;
  const goal = target ?? latest;
  let current = schemaVersion(db);
  if (current > latest) {
    throw new Error(`database schema version ${current} is newer than this build supports (${latest}); upgrade Switchboard`);
  }
  for (const m of migrations) {
    if (m.version <= current || m.version > goal) continue;
    // The pragma is a no-op inside a transaction, so it is set around it.
    const foreignKeys = (db.prepare('PRAGMA foreign_keys').get() as { foreign_keys: number }).foreign_keys;
    if (m.rebuildsReferencedTable) db.exec('PRAGMA foreign_keys = OFF');
    db.exec('BEGIN IMMEDIATE');
    try {
      m.up(db);
      if (m.rebuildsReferencedTable) {
        const broken = db.prepare('PRAGMA foreign_key_check').all() as Array<{ table: string }>;
        if (broken.length > 0) throw new Error(`${broken.length} rows would break a foreign key (first in ${broken[0]!.table})`);
      }
      db.exec(`PRAGMA user_version = ${m.version}`);
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw new Error(`migration ${m.version} (${m.name}) failed: ${(error as Error).message}`, { cause: error });
    } finally {
      if (m.rebuildsReferencedTable) db.exec(`PRAGMA foreign_keys = ${foreignKeys ? 'ON' : 'OFF'}`);
    }
    current = m.version;
  }
  return current;
}
