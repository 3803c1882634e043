import { after, before } from 'node:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startPostgres, type PgServer } from '../../../../test/helpers/postgres.ts';
import { copyDatabase, urlOf } from '../../../../test/helpers/pg-work-fixture.ts';
import { createStore, type Store } from '../index.ts';
import { openDatabase } from '../db.ts';
import { migratePg } from './migrate.ts';
import { openPgPool } from './pool.ts';

/**
 * Both stores for a test that runs one scenario on each and compares (the query groups of
 * issue 30): a fresh SQLite file, and a fresh copy of a migrated PostgreSQL database on ONE
 * server per test file. The database sorts text with ICU's root collation ("beta" before "Zed"),
 * as one made with en_US.UTF-8 does, so a list that forgot SQLite's byte order shows it.
 */
export interface BothStores {
  sqlite(): Store;
  /** A fresh database and `nodes` pools on it (each pool a node); closed after the file. */
  postgres(nodes?: number): Promise<{ pools: pg.Pool[]; url: string }>;
}

export function bothStores(prefix: string): BothStores {
  let server: PgServer | undefined;
  let made = 0;
  const open: Array<{ close(): unknown }> = [];
  const pools: pg.Pool[] = [];
  const template = `${prefix}_template`;
  before(async () => {
    server = await startPostgres();
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${template} TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'und' LOCALE 'C.UTF-8'`);
    await admin.end();
    const db = new pg.Client({ connectionString: urlOf(server.url, template) });
    await db.connect();
    await migratePg(db);
    await db.end();
  });
  after(async () => {
    for (const s of open) s.close();
    await Promise.all(pools.map((p) => p.end()));
    await server?.stop();
  });
  return {
    sqlite() {
      const store = createStore(openDatabase(join(mkdtempSync(join(tmpdir(), `sb-${prefix}-`)), 'switchboard.db')));
      open.push(store);
      return store;
    },
    async postgres(nodes = 1) {
      const url = await copyDatabase(server!.url, template, `${prefix}_${++made}`);
      const nodePools = Array.from({ length: nodes }, (_, i) => openPgPool(url, { max: 4, applicationName: `node-${i}`, onIdleError: () => {} }));
      pools.push(...nodePools);
      return { pools: nodePools, url };
    },
  };
}

/** Runs `sql` (several statements, no parameters) on either store: seeds that read the same on both. */
export async function seed(db: Store | pg.Pool, sql: string): Promise<void> {
  if (db instanceof pg.Pool) await db.query(sql);
  else db.connection.exec(sql);
}

/**
 * Resolves once a session of `pool`'s database waits on a row lock: the other node's statement is
 * then blocked behind the transaction the test holds open. Polled: PostgreSQL announces no such event.
 */
export async function waitForLockWait(pool: pg.Pool): Promise<void> {
  for (let tries = 0; tries < 500; tries++) {
    const { rows } = await pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
    if ((rows[0] as { n: number }).n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no session waited on a lock within 5 s');
}

/** `work` inside a transaction held open on one connection of `pool` until `release` is called (the other node's view: uncommitted). */
export async function holdTransaction(pool: pg.Pool, work: (tx: pg.PoolClient) => unknown): Promise<{ commit(): Promise<void> }> {
  const tx = await pool.connect();
  await tx.query('BEGIN');
  await work(tx);
  return {
    async commit() {
      try {
        await tx.query('COMMIT');
      } finally {
        tx.release();
      }
    },
  };
}
