import { DatabaseSync } from 'node:sqlite';
import { chmodSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrate } from './migrate.ts';
import { ensurePrivateDir, ensurePrivateFile, PRIVATE_FILE_MODE } from './data-dir.ts';

export type Db = DatabaseSync;

export interface OpenOptions {
  /** Busy timeout for lock waits, e.g. while the CLI writes to the shared database. */
  busyTimeoutMs?: number;
  /** WAL pages after which a commit on this connection checkpoints (SQLite's default: 1000). */
  walAutocheckpointPages?: number;
}

/**
 * For the writer thread's connection, the only one that commits under load. At SQLite's default
 * of 1000 pages a commit checkpoints every few batches, inside that commit: it copies the pages
 * into the database file and fsyncs it. On the 1,000,000-entry store those pages lie scattered
 * over a gigabyte (each message touches its conversation's rows in big indexes), and a commit of
 * 8 messages took 3.6–3.8 ms against 1.8–2.0 on an empty store (bench/scale/writer.ts). Eight
 * times the WAL lets a page dirtied by many commits reach the file once, and fsyncs the file an
 * eighth as often: 2.6–3.7 ms there. The cost is disk, not memory: the WAL file grows to about
 * 32 MiB and its index in the -shm file by some 64 KiB; crash recovery replays at most that.
 */
export const WRITER_WAL_AUTOCHECKPOINT_PAGES = 8192;

/**
 * For the writer thread's connection, once it is open and caught up (see openWriterStore). Every
 * job of a group transaction runs in a savepoint, and so does the search index's flush before
 * COMMIT, so SQLite keeps a copy of each page first changed inside one (the sub-journal) to roll
 * back to. Past 64 KiB that copy spills to a temporary file, created in /var/tmp and unlinked at
 * COMMIT, and FTS5's segment merges spilled it in most transactions: a `perf` profile under load
 * showed the writer spending 17 % of its time writing that file and a third of its CPU in the
 * kernel. Held in memory it costs a memcpy per page, about 4 KiB of memory per page changed in one
 * savepoint and freed at its RELEASE: a job's statements or one flush of the search queue, a few
 * hundred pages under load. Measured at 100 connections (docs/benchmarks.md, bench/ingest): the writer's CPU
 * per message fell by about a quarter, its kernel time by half. Sorts and temporary b-trees move
 * to memory too; the writer's statements are indexed and bounded (query-plans.test.ts).
 */
export function keepTempDataInMemory(db: Db): void {
  db.exec('PRAGMA temp_store = MEMORY');
}

/** The files SQLite keeps beside the database in WAL mode. */
export function databaseFiles(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`];
}

/**
 * Opens (creating if needed) the database with the durability settings the protocol promises:
 * WAL so readers never block the writer, synchronous=FULL so an acknowledged message survives
 * power loss, then brings the schema up to date. A new database (folder, file, WAL, SHM) is
 * private to its owner whatever the umask: the file is made 0600 before SQLite opens it.
 */
export function openDatabase(path: string, options: OpenOptions = {}): Db {
  let created = false;
  if (path !== ':memory:') {
    ensurePrivateDir(dirname(path));
    created = ensurePrivateFile(path);
  }
  const db = new DatabaseSync(path, { timeout: options.busyTimeoutMs ?? 5000 });
  db.exec('PRAGMA journal_mode = WAL');
  if (created && process.platform !== 'win32') {
    // SQLite copies the database file's mode to these; set it anyway in case a build does not.
    for (const file of databaseFiles(path).slice(1)) if (existsSync(file)) chmodSync(file, PRIVATE_FILE_MODE);
  }
  db.exec('PRAGMA synchronous = FULL');
  if (options.walAutocheckpointPages !== undefined) db.exec(`PRAGMA wal_autocheckpoint = ${Math.max(0, Math.floor(options.walAutocheckpointPages))}`);
  db.exec('PRAGMA foreign_keys = ON');
  migrate(db);
  refreshStatistics(db);
  return db;
}

/**
 * Keeps the planner's statistics current, as SQLite advises for every open: a bounded sample per
 * index (analysis_limit) and ANALYZE only where statistics are missing or a table has grown
 * a lot. Measured on 200k messages: about 100 ms on the first open without statistics, 1–5 ms
 * after. Statistics only steer plans (the hot queries also name their index), so a busy database
 * is not a reason to fail opening it.
 */
export function refreshStatistics(db: Db): void {
  try {
    db.exec('PRAGMA analysis_limit = 400');
    db.exec('PRAGMA optimize = 0x10002');
    pinSearchIndexStatistics(db);
  } catch {
    // Another connection holds the write lock past the busy timeout: plans fall back to the named indexes.
  }
}

/**
 * FTS5 reads and trims its own tables by rowid range (`DELETE FROM messages_fts_data WHERE id >= ?
 * AND id <= ?` at every merge). Statistics taken while such a table held a couple of rows (a new
 * store's first open) made the planner scan it whole instead, four times per merge step: a review
 * measured 85–100 ms of CPU per step on a 200,000-message store until the next restart. Dropping
 * them is not enough (a connection keeps the row count it loaded), so these tables get the figure
 * SQLite assumes for a table it knows nothing about, a million rows, and the connection reloads.
 * PRAGMA optimize may measure them again at the next open; this runs after it every time.
 */
export const FTS_DATA_ROWS_ASSUMED = '1000000';
export function pinSearchIndexStatistics(db: Db): void {
  if (!db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'sqlite_stat1'").get()) return;
  // Pinned: the table's own row with the assumed figure, and no other row for it.
  const stale = db.prepare(
    `SELECT name FROM sqlite_schema t WHERE type = 'table' AND name GLOB '*_fts_data' AND (
       NOT EXISTS (SELECT 1 FROM sqlite_stat1 WHERE tbl = t.name AND idx IS NULL AND stat = :rows)
       OR EXISTS (SELECT 1 FROM sqlite_stat1 WHERE tbl = t.name AND (idx IS NOT NULL OR stat != :rows)))`,
  ).all({ rows: FTS_DATA_ROWS_ASSUMED }) as Array<{ name: string }>;
  if (stale.length === 0) return;
  const drop = db.prepare('DELETE FROM sqlite_stat1 WHERE tbl = ?');
  const pin = db.prepare('INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, NULL, ?)');
  for (const { name } of stale) {
    drop.run(name);
    pin.run(name, FTS_DATA_ROWS_ASSUMED);
  }
  db.exec('ANALYZE sqlite_schema');
}
