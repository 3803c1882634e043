import type { ClientBase } from 'pg';
import { PG_MIGRATIONS } from './migrations/index.ts';

export interface PgMigration {
  version: number;
  name: string;
  /**
   * Runs inside the runner's transaction: it must not BEGIN or COMMIT itself, so no CREATE INDEX
   * CONCURRENTLY here (a later migration that needs one on a large table needs its own design).
   */
  up(client: ClientBase): Promise<void>;
}

/**
 * The session-level advisory lock every node takes around its migration run, so that nodes started
 * together apply each migration once, one after the other. Fixed and documented
 * (docs/operations.md): an operator can see a node waiting on it in pg_locks (objid/classid are the
 * key's low and high 32 bits, objsubid 1). Its bytes are the ASCII of "SBMIGRAT", unlikely to
 * collide with another application's advisory locks. Advisory locks are per database: nodes
 * sharing a database queue on it; installations in other databases of one server do not.
 */
export const PG_MIGRATION_LOCK_KEY = 5999442630735446356n; // 0x53424d4947524154

export interface PgMigrateOptions {
  /** Stop after this version (tests build a database at an older version); default: the latest. */
  target?: number;
  /** Called once when another session holds the lock and this run starts waiting for it (a node logs it). */
  onWaiting?: () => void;
}

export interface PgMigrateResult {
  /** The version the database had when this run took the lock. */
  from: number;
  /** The version it has now. */
  to: number;
  /** The migrations this run applied, in order, with how long each took. */
  applied: Array<{ version: number; name: string; ms: number }>;
  /** True when another session held the lock when this run asked for it. */
  waited: boolean;
}

/** The list must be 1, 2, 3 … with no gap or repeat: a programming error otherwise, caught before any SQL. */
function checkList(migrations: readonly PgMigration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`PostgreSQL migrations must be numbered 1, 2, 3 …: position ${i + 1} holds version ${m.version} (${m.name})`);
  });
}

/**
 * Applies each pending numbered migration in its own transaction, holding PG_MIGRATION_LOCK_KEY for
 * the whole run (released in finally, and by PostgreSQL if the connection drops), so a failure
 * leaves the database at the last good version and two nodes never migrate at once. A database
 * that has a version this build does not know (a newer node migrated it) or a gap in its versions
 * is refused before anything is written. Needs a session of its own: not through a
 * transaction-pooling proxy (PgBouncer in transaction mode), which would hand the lock to another
 * client's session.
 */
export async function migratePg(client: ClientBase, migrations: readonly PgMigration[] = PG_MIGRATIONS, options: PgMigrateOptions = {}): Promise<PgMigrateResult> {
  checkList(migrations);
  const latest = migrations.length;
  const target = options.target ?? latest;
  if (!Number.isInteger(target) || target < 0 || target > latest) throw new Error(`migration target ${target} is not between 0 and ${latest}`);

  const key = PG_MIGRATION_LOCK_KEY.toString();
  const tried = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [key]);
  const waited = !tried.rows[0]!.ok;
  if (waited) {
    options.onWaiting?.();
    await client.query('SELECT pg_advisory_lock($1::bigint)', [key]);
  }
  let failed = false;
  try {
    // Created under the lock: two sessions racing CREATE TABLE IF NOT EXISTS can both pass the
    // check and one then fails on the catalog's unique index.
    await client.query(`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY CHECK (version > 0),
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    const from = await currentVersion(client, migrations);
    const applied: PgMigrateResult['applied'] = [];
    for (const m of migrations) {
      if (m.version <= from || m.version > target) continue;
      const started = performance.now();
      await client.query('BEGIN');
      try {
        await m.up(client);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(`PostgreSQL migration ${m.version} (${m.name}) failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push({ version: m.version, name: m.name, ms: performance.now() - started });
    }
    return { from, to: Math.max(from, applied.at(-1)?.version ?? 0), applied, waited };
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    // An unlock that fails (the connection is gone, which released the lock anyway) must not hide
    // the error that got us here.
    await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch((error: unknown) => {
      if (!failed) throw error;
    });
  }
}

/**
 * The database's version: the highest applied, after checking that the applied versions are
 * exactly 1 … n and that this build knows each of them by the same name.
 */
async function currentVersion(client: ClientBase, migrations: readonly PgMigration[]): Promise<number> {
  const latest = migrations.length;
  const rows = (await client.query<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version')).rows;
  const newest = rows.at(-1);
  if (newest && newest.version > latest) {
    throw new Error(
      `database schema version ${newest.version} (${newest.name}) is newer than this build supports (${latest}): a newer Switchboard migrated it; upgrade this node`,
    );
  }
  rows.forEach((row, i) => {
    if (row.version !== i + 1) {
      throw new Error(`database schema has a gap: version ${row.version} (${row.name}) is applied but version ${i + 1} is not; restore the database or apply ${i + 1} by hand`);
    }
    const known = migrations[i]!;
    if (known.name !== row.name) {
      throw new Error(`database schema version ${row.version} is "${row.name}" but this build's ${known.version} is "${known.name}": the database came from another line of Switchboard`);
    }
  });
  return newest?.version ?? 0;
}

/** The database's version without taking the lock or creating anything (0: never migrated). */
export async function pgSchemaVersion(client: ClientBase): Promise<number> {
  const exists = await client.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  if (exists.rows[0]!.t === null) return 0;
  const r = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
  return r.rows[0]!.v ?? 0;
}
