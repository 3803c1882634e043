import { loadServerConfig } from '../config/server-config.ts';
import { storeOf, STORE_ENV, StoreChoiceError } from '../config/store-choice.ts';
import type pg from 'pg';
import type { CliIo } from './cli-io.ts';
import type { Store } from '../store/index.ts';
import type { StoreContract } from '../store/contract.ts';
import { sqliteInTransaction, type InTransaction } from '../store/in-transaction.ts';

/** A store and its transactions: the data folder's SQLite file, or PostgreSQL (pgStore, pgInTransaction). */
export interface StoreTarget {
  store: StoreContract;
  transaction: InTransaction;
}

export const sqliteTarget = (store: Store): StoreTarget => ({ store, transaction: sqliteInTransaction(store) });

/**
 * The store a CLI command works on, chosen as serve chooses it (--store, SWITCHBOARD_STORE,
 * config.json's `store`); null for the data folder's SQLite file. config.json is read only when
 * neither the flag nor the environment decides.
 */
export function cliStoreUrl(flag: string | undefined, env: NodeJS.ProcessEnv, dataDir: string): string | null {
  return storeOf(flag, env[STORE_ENV], () => loadServerConfig(dataDir).store);
}

/** Why each group that does not run on PostgreSQL is refused there, as the refusal says it. */
const NOT_ON_POSTGRES: Record<string, string> = {
  backup: 'it copies the data folder\'s SQLite file; back up a PostgreSQL database with pg_dump (for example pg_dump -Fc -f switchboard.dump "$SWITCHBOARD_STORE")',
  eval: 'not yet (issue 30): its replays are written for the data folder\'s SQLite file',
};

/**
 * A command group that does not work on PostgreSQL is refused in one line, rather than quietly
 * working on the data folder's SQLite file, which no node of that installation reads.
 */
export function refuseOnPostgres(group: string, onPostgres: readonly string[]): StoreChoiceError {
  const why = NOT_ON_POSTGRES[group] ?? 'not yet (issue 30)';
  return new StoreChoiceError(`"${group}" does not run on PostgreSQL: ${why}. These do: ${onPostgres.join(', ')}`);
}

/**
 * `work` on the PostgreSQL database at `url`: a small pool, the schema migrated first (under the
 * advisory lock the nodes take, so a CLI run racing a node's start waits for it), the pool closed
 * at the end whatever happened. A database that cannot be reached is said so, with the URL's
 * password hidden.
 */
export async function onPostgres<T>(url: string, io: CliIo, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
  // Loaded only here: a CLI run on SQLite does not pay for the driver.
  const [{ openPgPool, redactedStoreUrl }, { migratePg }] = await Promise.all([import('../store/pg/pool.ts'), import('../store/pg/migrate.ts')]);
  const pool = openPgPool(url, { max: 2, applicationName: 'switchboard cli', onIdleError: () => {}, queryTimeoutMs: 0 });
  try {
    let client;
    try {
      client = await pool.connect();
    } catch (error) {
      throw new Error(`cannot reach PostgreSQL at ${redactedStoreUrl(url)}: ${(error as Error).message}`, { cause: error });
    }
    try {
      const migrated = await migratePg(client);
      if (migrated.applied.length > 0) io.err(`PostgreSQL: applied migrations ${migrated.applied.map((m) => m.version).join(', ')}`);
    } finally {
      client.release();
    }
    return await work(pool);
  } finally {
    await pool.end();
  }
}
