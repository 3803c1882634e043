import type { DatabaseSync, SQLOutputValue } from 'node:sqlite';
import type { ClientBase, DatabaseError } from 'pg';
import { migratePg, pgSchemaVersion, type PgMigrateResult } from './migrate.ts';
import { planTables, quote, insertSql, toParam, ValueError, ROLLUP_TRIGGERS, SEEDED, PG_ONLY, type TablePlan } from './copy-tables.ts';
import { verifyCopy } from './copy-verify.ts';

/**
 * `store copy`: a SQLite store into an empty PostgreSQL database, in one PostgreSQL transaction
 * (a failure anywhere, the check included, leaves the target as it was), read from one SQLite
 * read transaction (one snapshot of every table, also while serve writes).
 */

export interface CopyOptions {
  /** Rows per INSERT (default 5,000). */
  batchRows?: number;
  /** Rows compared column by column per table (default 200). */
  sampleRows?: number;
  /** Tables of at least this many rows report progress every tenth (default 50,000). */
  progressFrom?: number;
  onProgress?: (line: string) => void;
  /** Milliseconds from any origin, for the timings (default performance.now). */
  now?: () => number;
  /** For tests: runs in the transaction once every row is in, before the check. */
  beforeVerify?: (target: ClientBase) => Promise<void>;
}

export interface CopyResult {
  migrated: PgMigrateResult;
  tables: Array<{ name: string; rows: number; ms: number }>;
  /** SQLite-only tables left behind. */
  skipped: string[];
  sampled: number;
  /** Rows in, indexes and foreign keys made again: the whole copy before the check. */
  copyMs: number;
  /** Of copyMs: making the dropped indexes and foreign keys again. */
  rebuildMs: number;
  verifyMs: number;
}

/** The target holds data, or is not a Switchboard database: nothing was written. */
export class CopyRefusedError extends Error {}

/** The copy's check found differences: the transaction was rolled back. */
export class CopyMismatchError extends Error {
  readonly mismatches: string[];
  constructor(mismatches: string[]) {
    super(`the copy does not match the SQLite store (${mismatches.length} difference${mismatches.length === 1 ? '' : 's'}); nothing was committed`);
    this.mismatches = mismatches;
  }
}

export async function copyToPg(source: DatabaseSync, target: ClientBase, options: CopyOptions = {}): Promise<CopyResult> {
  const now = options.now ?? (() => performance.now());
  const batchRows = options.batchRows ?? 5000;
  const progress = options.onProgress ?? (() => {});

  // Before any migration runs: a database with tables but no schema_migrations is someone else's,
  // and one of ours that holds data is refused as it is (the check in the transaction below is
  // the one that counts when two copies race; this one keeps a refused database unmigrated).
  const existing = (await target.query<{ t: string }>('SELECT tablename AS t FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1')).rows.map((r) => r.t);
  if ((await pgSchemaVersion(target)) === 0 && existing.length > 0) {
    throw new CopyRefusedError(`the target database is not empty (tables ${existing.slice(0, 5).join(', ')}) and not a Switchboard database: give store copy an empty database`);
  }
  await refuseUnlessEmpty(target, existing);
  const migrated = await migratePg(target);
  const { plans, skipped, targetTables } = await planTables(source, target);

  source.exec('BEGIN');
  await target.query('BEGIN');
  try {
    // Rollups: stats_minutes and request_log_rows are copied as they are, with the triggers that
    // would count each copied request, reply and failed attempt a second time turned off. Rebuilding
    // them from the copied rows instead would lose history: SQLite's retention deletes old
    // request_log rows and leaves their minutes counted, so the dashboard's past has no rows to
    // rebuild from. ALTER TABLE … DISABLE TRIGGER needs only ownership of the table (the role
    // that ran the migrations), not superuser as session_replication_role = replica would; it is
    // transactional, so a failure or a dropped connection leaves the triggers on; and its ACCESS
    // EXCLUSIVE lock makes a second copy started meanwhile wait here, then find the data and stop.
    for (const [table, trigger] of ROLLUP_TRIGGERS) await target.query(`ALTER TABLE ${quote(table)} DISABLE TRIGGER ${quote(trigger)}`);
    await refuseUnlessEmpty(target, targetTables);
    for (const table of Object.keys(SEEDED)) if (plans.some((p) => p.name === table)) await target.query(`DELETE FROM ${quote(table)}`);
    const deferred = await dropForCopy(target, plans.map((p) => p.name));

    const tables: CopyResult['tables'] = [];
    const copyStarted = now();
    for (const plan of plans) {
      const started = now();
      const rows = await copyTable(source, target, plan, batchRows, (done, total) => {
        if (total < (options.progressFrom ?? 50_000)) return;
        const s = (now() - started) / 1000;
        progress(`store copy: ${plan.name} ${fmt(done)} of ${fmt(total)} rows (${Math.round((done / total) * 100)} %), ${fmt(s > 0 ? done / s : 0)} rows/s`);
      });
      tables.push({ name: plan.name, rows, ms: now() - started });
    }
    for (const [table, trigger] of ROLLUP_TRIGGERS) await target.query(`ALTER TABLE ${quote(table)} ENABLE TRIGGER ${quote(trigger)}`);
    const indexStarted = now();
    progress(`store copy: making ${deferred.length} indexes and foreign keys again`);
    // Room to sort each index in memory; SET LOCAL ends with the transaction, and any role may set it.
    await target.query("SET LOCAL maintenance_work_mem = '256MB'");
    for (const statement of deferred) await target.query(statement);
    const rebuildMs = now() - indexStarted;
    const copyMs = now() - copyStarted;

    await options.beforeVerify?.(target);
    const verifyStarted = now();
    const verified = await verifyCopy(source, target, plans, options.sampleRows ?? 200);
    if (verified.mismatches.length > 0) throw new CopyMismatchError(verified.mismatches);
    // Identity columns are GENERATED BY DEFAULT so the SQLite ids went in as they are; the next id
    // PostgreSQL hands out must come after the largest. setval is not undone by a ROLLBACK, so it
    // runs last, once nothing but the COMMIT can fail.
    for (const plan of plans) {
      if (plan.identity === null) continue;
      const id = quote(plan.identity);
      await target.query(`SELECT setval(pg_get_serial_sequence($1, $2), coalesce(max(${id}), 0) + 1, false) FROM ${quote(plan.name)}`, [quote(plan.name), plan.identity]);
    }
    const verifyMs = now() - verifyStarted;
    await target.query('COMMIT');
    return { migrated, tables, skipped, sampled: verified.sampled, copyMs, rebuildMs, verifyMs };
  } catch (error) {
    await target.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    source.exec('ROLLBACK');
  }
}

/** Any row in any application table (the migrations' starting rows, schema_migrations and kb_version's counter do not count). */
async function refuseUnlessEmpty(target: ClientBase, tables: string[]): Promise<void> {
  const checks = tables
    .filter((t) => !PG_ONLY.has(t))
    .map((t) => `SELECT ${literal(t)} AS t WHERE EXISTS (SELECT 1 FROM ${quote(t)}${t in SEEDED ? ` WHERE ${SEEDED[t]}` : ''})`);
  if (checks.length === 0) return;
  const held = (await target.query<{ t: string }>(checks.join(' UNION ALL '))).rows.map((r) => r.t);
  if (held.length > 0) {
    throw new CopyRefusedError(`the target database already holds data (in ${held.sort().join(', ')}): store copy writes only into an empty database; nothing was written`);
  }
}

/**
 * The non-unique indexes and the foreign keys of the tables copied, dropped for the copy and made
 * again after it from their own definitions, as pg_restore loads data before constraints: an index
 * built once from sorted rows (the trigram index on messages above all) and a foreign key checked
 * by one join cost a fraction of keeping them row by row. Primary keys and unique indexes stay:
 * they are keys, checked as the rows arrive. Everything is in the copy's transaction: a failure
 * puts them back, and a row breaking a foreign key fails the ADD CONSTRAINT, so the copy.
 * Returns the statements that make them again.
 */
async function dropForCopy(target: ClientBase, tables: string[]): Promise<string[]> {
  const keys = await target.query<{ t: string; name: string; definition: string }>(
    `SELECT k.conrelid::regclass::text AS t, quote_ident(k.conname) AS name, pg_get_constraintdef(k.oid) AS definition
     FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
     WHERE k.contype = 'f' AND c.relname = ANY($1) ORDER BY 1, 2`,
    [tables],
  );
  const indexes = await target.query<{ name: string; definition: string }>(
    `SELECT quote_ident(ic.relname) AS name, pg_get_indexdef(i.indexrelid) AS definition
     FROM pg_index i
     JOIN pg_class ic ON ic.oid = i.indexrelid
     JOIN pg_class t ON t.oid = i.indrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
     WHERE NOT i.indisunique AND t.relname = ANY($1) ORDER BY 1`,
    [tables],
  );
  for (const k of keys.rows) await target.query(`ALTER TABLE ${k.t} DROP CONSTRAINT ${k.name}`);
  for (const index of indexes.rows) await target.query(`DROP INDEX ${index.name}`);
  // Indexes first: a foreign key's check then finds them (none of ours needs one, but a later one might).
  return [...indexes.rows.map((i) => i.definition), ...keys.rows.map((k) => `ALTER TABLE ${k.t} ADD CONSTRAINT ${k.name} ${k.definition}`)];
}

const literal = (s: string): string => `'${s.replaceAll("'", "''")}'`;

/**
 * Reads the table in key order through one statement (rows stream, one batch in memory at a time),
 * and sends each batch while the next is read: PostgreSQL inserts one while this process reads
 * and converts the next.
 */
async function copyTable(source: DatabaseSync, target: ClientBase, plan: TablePlan, batchRows: number, onBatch: (done: number, total: number) => void): Promise<number> {
  const total = Number((source.prepare(`SELECT count(*) AS n FROM ${quote(plan.name)}`).get() as { n: number }).n);
  if (total === 0) return 0;
  const read = source.prepare(`SELECT ${plan.columns.map((c) => quote(c.name)).join(', ')} FROM ${quote(plan.name)} ORDER BY ${plan.key.map(quote).join(', ')}`);
  read.setReadBigInts(true);
  read.setReturnArrays(true);
  const text = insertSql(plan);
  const keyAt = plan.key.map((k) => plan.columns.findIndex((c) => c.name === k));
  const keyText = (row: SQLOutputValue[]): string => plan.key.map((k, i) => `${k}=${String(row[keyAt[i]!])}`).join(', ');

  let done = 0;
  let nextReport = Math.ceil(total / 10);
  let inFlight: Promise<unknown> | null = null;
  let arrays: unknown[][] = plan.columns.map(() => []);
  let first = '';
  let lastRow: SQLOutputValue[] = [];
  const send = async (): Promise<void> => {
    const values = arrays;
    const range = `rows ${first} to ${keyText(lastRow)}`;
    const n = values[0]!.length;
    arrays = plan.columns.map(() => []);
    await inFlight;
    const sent = target.query({ name: `store_copy_${plan.name}`, text, values }).then(
      () => {
        done += n;
        if (done >= nextReport || done === total) {
          onBatch(done, total);
          nextReport = done + Math.ceil(total / 10);
        }
      },
      (error: DatabaseError) => {
        const detail = error.detail ? ` (${error.detail})` : '';
        throw new Error(`copying ${plan.name}, ${range}: ${error.message}${detail}`, { cause: error });
      },
    );
    // Awaited before the next batch goes; this only keeps a failure while a conversion throws
    // from being reported as unhandled.
    sent.catch(() => undefined);
    inFlight = sent;
  };
  for (const row of read.iterate() as Iterable<SQLOutputValue[]>) {
    if (arrays[0]!.length === 0) first = keyText(row);
    plan.columns.forEach((c, i) => {
      try {
        arrays[i]!.push(toParam(row[i], c.type));
      } catch (error) {
        if (!(error instanceof ValueError)) throw error;
        throw new ValueError(`${plan.name} (${keyText(row)}) column ${c.name}: ${error.message}`);
      }
    });
    lastRow = row;
    if (arrays[0]!.length >= batchRows) await send();
  }
  if (arrays[0]!.length > 0) await send();
  await inFlight;
  return done;
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
