import { existsSync, statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { UsageError } from './args.ts';
import { openDatabase } from '../store/db.ts';
import { schemaVersion } from '../store/migrate.ts';
import { MIGRATIONS } from '../store/migrations/index.ts';
import { PG_BASELINE_SQLITE_VERSION } from '../store/pg/migrations/index.ts';
import { copyToPg, CopyMismatchError, type CopyResult } from '../store/pg/copy.ts';
import { databasePath, secretKeyPath } from '../store/data-dir.ts';


export interface StoreIo {
  /** Progress and differences, on stderr. */
  progress(line: string): void;
}

export const processStoreIo: StoreIo = { progress: (line) => console.error(line) };

/** `npm run cli -- store copy --to URL`: the report on success; throws with a one-line reason otherwise. */
export async function storeCommand(dataDir: string, args: string[], flags: { to?: string; batch?: string }, io: StoreIo = processStoreIo): Promise<string> {
  const [action, extra] = args;
  if (action !== 'copy') throw new UsageError(`unknown store command "${action ?? ''}"; use: store copy --to postgres://…`);
  if (extra !== undefined) throw new UsageError(`store copy takes no argument "${extra}"; give the target with --to postgres://…`);
  const url = targetUrl(flags.to);
  const batchRows = flags.batch === undefined ? undefined : Number(flags.batch);
  if (batchRows !== undefined && !(Number.isInteger(batchRows) && batchRows >= 1 && batchRows <= 100_000)) {
    throw new UsageError(`--batch must be a whole number of rows from 1 to 100000, got "${flags.batch}"`);
  }
  const file = sourceDatabase(dataDir);
  const source = new DatabaseSync(file, { readOnly: true });
  const client = new pg.Client({ connectionString: flags.to, connectionTimeoutMillis: 10_000, application_name: 'switchboard store copy' });
  try {
    try {
      await client.connect();
    } catch (error) {
      throw new Error(`cannot connect to PostgreSQL at ${shown(url)}: ${reason(error)}`, { cause: error });
    }
    // A server that goes away mid-copy is reported by the query that fails; this keeps the
    // client's own 'error' event from ending the process first.
    client.on('error', () => undefined);
    let result: CopyResult;
    try {
      result = await copyToPg(source, client, { batchRows, onProgress: io.progress });
    } catch (error) {
      if (error instanceof CopyMismatchError) for (const line of error.mismatches) io.progress(`mismatch: ${line}`);
      throw error;
    }
    return report(file, shown(url), dataDir, result);
  } finally {
    source.close();
    await client.end().catch(() => undefined);
  }
}

function targetUrl(to: string | undefined): URL {
  if (to === undefined || to === '') throw new UsageError('store copy needs --to postgres://USER@HOST:PORT/DATABASE (an empty database)');
  let url: URL;
  try {
    url = new URL(to);
  } catch {
    throw new UsageError(`--to is not a URL: give postgres://USER@HOST:PORT/DATABASE`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw new UsageError(`--to must be a postgres:// or postgresql:// URL, got ${url.protocol}//…`);
  if (url.pathname.length <= 1) throw new UsageError(`--to names no database: give postgres://USER@HOST:PORT/DATABASE`);
  return url;
}

/** The URL as printed: never its password. */
function shown(url: URL): string {
  const copy = new URL(url);
  copy.password = '';
  copy.search = '';
  return copy.toString();
}

function reason(error: unknown): string {
  const e = error as { code?: string; message?: string };
  if (e.code === 'ECONNREFUSED') return 'connection refused (is PostgreSQL running, and on that port?)';
  if (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') return 'no such host';
  if (e.code === '3D000') return `${e.message} (create it first: createdb, or CREATE DATABASE … as its owner)`;
  return e.message ?? String(error);
}

/**
 * The data folder's database at the SQLite schema PostgreSQL's migrations match: an older store is
 * migrated first, as every CLI command opening it does; a newer one is refused.
 */
function sourceDatabase(dataDir: string): string {
  if (!existsSync(dataDir) || !statSync(dataDir).isDirectory()) throw new UsageError(`no data folder at ${dataDir}: give the installation's folder with --data-dir`);
  const file = databasePath(dataDir);
  if (!existsSync(file)) throw new UsageError(`no database in ${dataDir} (${file} is missing): give the installation's folder with --data-dir`);
  const peek = new DatabaseSync(file, { readOnly: true });
  let version: number;
  try {
    version = schemaVersion(peek);
  } finally {
    peek.close();
  }
  const latest = MIGRATIONS.at(-1)!.version;
  if (version < latest) openDatabase(file).close();
  else if (version > latest) throw new Error(`the store's schema version ${version} is newer than this build (${latest}): copy it with the Switchboard that last ran it`);
  if (latest !== PG_BASELINE_SQLITE_VERSION) {
    throw new Error(`this build's PostgreSQL schema matches SQLite schema version ${PG_BASELINE_SQLITE_VERSION}, not ${latest}: store copy cannot run with this build`);
  }
  return file;
}

function report(file: string, target: string, dataDir: string, r: CopyResult): string {
  const rows = r.tables.reduce((n, t) => n + t.rows, 0);
  const width = Math.max(...r.tables.map((t) => t.name.length), '(indexes, foreign keys)'.length);
  const line = (name: string, n: string, ms: string): string => `  ${name.padEnd(width)}  ${n.padStart(11)}  ${ms.padStart(9)}`;
  const applied = r.migrated.applied.length === 0 ? 'none needed' : r.migrated.applied.map((m) => m.version).join(', ');
  return [
    `copied ${file} (SQLite schema ${PG_BASELINE_SQLITE_VERSION}) into ${target} (PostgreSQL schema ${r.migrated.to}; migrations applied: ${applied})`,
    line('table', 'rows', 'ms'),
    ...r.tables.map((t) => line(t.name, fmt(t.rows), fmt(t.ms))),
    line('(indexes, foreign keys)', '', fmt(r.rebuildMs)),
    line('total', fmt(rows), fmt(r.copyMs)) + `  (${fmt(r.copyMs > 0 ? rows / (r.copyMs / 1000) : 0)} rows/s)`,
    `verified: row counts of ${r.tables.length} tables equal, ${fmt(r.sampled)} sampled rows equal column by column (${fmt(r.verifyMs)} ms)`,
    `not copied (SQLite only): ${r.skipped.join(', ')} and their FTS5 shadow tables; PostgreSQL's trigram indexes take their place`,
    `client secrets and engine API keys were copied sealed: every node using this database needs this data folder's key, ${secretKeyPath(dataDir)}`,
  ].join('\n');
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
