import { DatabaseSync } from 'node:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrate } from './migrate.ts';

export type Db = DatabaseSync;

export interface OpenOptions {
  /** Busy timeout for lock waits, e.g. while the CLI writes to the shared database. */
  busyTimeoutMs?: number;
}

/**
 * Opens (creating if needed) the database with the durability settings the protocol promises:
 * WAL so readers never block the writer, synchronous=FULL so an acknowledged message survives
 * power loss, then brings the schema up to date.
 */
export function openDatabase(path: string, options: OpenOptions = {}): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(path, { timeout: options.busyTimeoutMs ?? 5000 });
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = FULL');
  db.exec('PRAGMA foreign_keys = ON');
  migrate(db);
  return db;
}
