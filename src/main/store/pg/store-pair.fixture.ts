import { after, afterEach, before } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startPostgres, type PgServer } from '../../../../test/helpers/postgres.ts';
import { openDatabase } from '../db.ts';
import { createStore, type Store } from '../index.ts';
import { migratePg } from './migrate.ts';
import { openPgPool } from './pool.ts';

// Test fixture (not imported by the app): the same data in a SQLite store and a PostgreSQL database.

export interface StorePair {
  sqlite: Store;
  pg: pg.Pool;
  /** Runs literal SQL (valid in both dialects) on both stores; on SQLite in one transaction, so the search index takes the messages. */
  seed(sql: string): Promise<void>;
  /** `read` on both stores; asserts the results are equal and returns SQLite's. */
  same<T>(label: string, read: (store: 'sqlite' | 'pg') => T | Promise<T>): Promise<T>;
}

/**
 * For a describe block: one PostgreSQL server for the file and a migrated template database
 * (UTF-8 ctype, so trigrams know Chinese), a migrated SQLite file, and `pair()`: a copy of each,
 * closed after each test, or with `shared`, after the file (for tests that only read).
 */
export function storePairs(prefix: string, options: { shared?: boolean; icuCollation?: string } = {}): () => Promise<StorePair> {
  let server: PgServer;
  let made = 0;
  const open: Array<() => Promise<void>> = [];
  const templateDir = mkdtempSync(join(tmpdir(), 'sb-pair-template-'));
  const sqliteTemplate = join(templateDir, 'switchboard.db');
  const closeAll = async (): Promise<void> => {
    for (const close of open.splice(0)) await close();
  };
  const urlOf = (db: string): string => server.url.replace(/\/[^/]*$/, `/${db}`);
  const admin = async (sql: string): Promise<void> => {
    const c = new pg.Client({ connectionString: server.url });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  before(async () => {
    server = await startPostgres();
    // An ICU collation (e.g. English: '-' and case weigh less than letters) shows the reads sort ids by bytes whatever the database's order.
    const icu = options.icuCollation ? ` LOCALE_PROVIDER icu ICU_LOCALE '${options.icuCollation}'` : '';
    await admin(`CREATE DATABASE ${prefix}_template TEMPLATE template0 ENCODING 'UTF8' LC_CTYPE 'C.UTF-8' LC_COLLATE 'C.UTF-8'${icu}`);
    const c = new pg.Client({ connectionString: urlOf(`${prefix}_template`) });
    await c.connect();
    await migratePg(c);
    await c.end();
    createStore(openDatabase(sqliteTemplate)).close();
  });
  if (!options.shared) afterEach(closeAll);
  after(async () => {
    await closeAll();
    rmSync(templateDir, { recursive: true, force: true });
    await server?.stop();
  });
  return async () => {
    const name = `${prefix}_${++made}`;
    await admin(`CREATE DATABASE ${name} TEMPLATE ${prefix}_template`);
    const pool = openPgPool(urlOf(name), { max: 4, onIdleError: () => {} });
    const dir = mkdtempSync(join(tmpdir(), 'sb-pair-'));
    copyFileSync(sqliteTemplate, join(dir, 'switchboard.db'));
    const sqlite = createStore(openDatabase(join(dir, 'switchboard.db')));
    open.push(async () => {
      sqlite.close();
      rmSync(dir, { recursive: true, force: true });
      await pool.end();
    });
    return {
      sqlite,
      pg: pool,
      async seed(sql) {
        sqlite.transaction(() => sqlite.connection.exec(sql));
        await pool.query(sql);
      },
      async same(label, read) {
        const expected = await read('sqlite');
        assert.deepStrictEqual(await read('pg'), expected, label);
        return expected;
      },
    };
  };
}
