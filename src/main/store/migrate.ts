import type { DatabaseSync } from 'node:sqlite';
import { MIGRATIONS } from './migrations/index.ts';

export interface Migration {
  version: number;
  name: string;
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
    db.exec('BEGIN IMMEDIATE');
    try {
      m.up(db);
      db.exec(`PRAGMA user_version = ${m.version}`);
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw new Error(`migration ${m.version} (${m.name}) failed: ${(error as Error).message}`, { cause: error });
    }
    current = m.version;
  }
  return current;
}
