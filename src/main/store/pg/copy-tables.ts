import type { DatabaseSync } from 'node:sqlite';
import type { ClientBase } from 'pg';
import { assertNever } from '../../../shared/assert-never.ts';

/**
 * What `store copy` copies from a SQLite store to PostgreSQL, and how each value crosses: the
 * table list comes from both catalogs (so a table added on both sides is copied without a change
 * here), ordered by PostgreSQL's foreign keys, and a table or column on one side only is refused
 * as a schema mismatch unless it is listed below with its reason.
 */

/** SQLite structures with no PostgreSQL counterpart: never copied. */
export const SQLITE_ONLY: Record<string, string> = {
  messages_fts: 'FTS5 message search; PostgreSQL searches messages through the trigram index messages_content_trgm',
  messages_fts_queue: "FTS5's deferred-indexing queue; PostgreSQL's GIN index is kept in the inserting transaction",
  kb_fts: "FTS5 knowledge-base search; PostgreSQL has trigram indexes on kb_entries (and kb_version for change detection)",
};
/** FTS5's shadow tables go with their FTS table; sqlite_* are SQLite's own (sqlite_stat1, sqlite_sequence). */
export const isSqliteInternal = (name: string): boolean => /^(messages|kb)_fts_(config|data|docsize|idx)$/.test(name) || name.startsWith('sqlite_');

/**
 * PostgreSQL tables that are neither copied nor checked for rows: the version record, the
 * knowledge-base change counter, and the nodes' quiet-period timers (migration 5), which a node
 * makes from the messages still waiting for their reply, as SQLite's scheduler re-arms its timers
 * at start, and the replay window every node shares (migration 6), which starts empty as a
 * restarted SQLite process's memory does (idempotency still answers a resent msg_id), and the
 * rollups' shards (migration 7): the copy brings SQLite's counts into the old tables, and the
 * shards count what the nodes add after it.
 */
export const PG_ONLY = new Set(['schema_migrations', 'kb_version', 'due_replies', 'replay_signatures', 'stats_minute_shards', 'request_log_row_shards']);

/** PostgreSQL columns with no SQLite twin, left at their defaults: a copied delivery is held by no node (migration 5's leases). */
export const PG_ONLY_COLUMNS: Record<string, readonly string[]> = { deliveries: ['lease_holder', 'lease_until', 'lease_count'] };

/**
 * Tables PostgreSQL's migrations fill with starting rows, with the condition that makes a row data:
 * a target counts as empty while they hold only starting rows, and the copy replaces them.
 */
export const SEEDED: Record<string, string> = {
  request_log_rows: 'n <> 0',
};

/**
 * The rollup triggers (migration 004) that would count each copied row a second time: the copy
 * brings stats_minutes and request_log_rows as SQLite has them, so these are off while it runs.
 * See copyToPg for why the rollups are copied rather than rebuilt.
 */
export const ROLLUP_TRIGGERS: ReadonlyArray<readonly [table: string, trigger: string]> = [
  ['request_log', 'stats_request_log_insert'],
  ['request_log', 'request_log_rows_insert'],
  ['replies', 'stats_replies_insert'],
  ['delivery_attempts', 'stats_delivery_attempts_insert'],
];

export type PgType = 'bigint' | 'integer' | 'smallint' | 'double precision' | 'text' | 'jsonb' | 'bytea' | 'boolean';
const PG_TYPES: readonly string[] = ['bigint', 'integer', 'smallint', 'double precision', 'text', 'jsonb', 'bytea', 'boolean'];

export interface Column {
  name: string;
  type: PgType;
}

export interface TablePlan {
  name: string;
  /** In SQLite's order (PostgreSQL's baseline keeps it). */
  columns: Column[];
  /** Primary-key columns: the order rows are read and sampled in. */
  key: string[];
  /** The identity column to setval after the copy, if the table has one. */
  identity: string | null;
}

export class SchemaMismatchError extends Error {}

export const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** The tables to copy, parents before children, with their columns; a mismatch names every difference found. */
export async function planTables(source: DatabaseSync, target: ClientBase): Promise<{ plans: TablePlan[]; skipped: string[]; targetTables: string[] }> {
  const liteTables = (source.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
  const pgColumns = (
    await target.query<{ t: string; c: string; type: string; identity: string; pk: number | null }>(`
      SELECT c.relname AS t, a.attname AS c, format_type(a.atttypid, a.atttypmod) AS type, a.attidentity AS identity,
        array_position(k.conkey, a.attnum) AS pk
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      LEFT JOIN pg_constraint k ON k.conrelid = c.oid AND k.contype = 'p'
      WHERE c.relkind = 'r'
      ORDER BY c.relname, a.attnum`)
  ).rows;
  const pgTables = new Map<string, typeof pgColumns>();
  for (const row of pgColumns) pgTables.set(row.t, [...(pgTables.get(row.t) ?? []), row]);

  const problems: string[] = [];
  const skipped = liteTables.filter((t) => t in SQLITE_ONLY);
  const plans = new Map<string, TablePlan>();
  for (const table of liteTables) {
    if (isSkipped(table)) continue;
    const pgCols = pgTables.get(table);
    if (!pgCols) {
      problems.push(`table ${table} has no PostgreSQL counterpart`);
      continue;
    }
    const liteCols = (source.prepare(`SELECT name FROM pragma_table_info('${table}') ORDER BY cid`).all() as Array<{ name: string }>).map((r) => r.name);
    const byName = new Map(pgCols.map((c) => [c.c, c]));
    const columns: Column[] = [];
    for (const name of liteCols) {
      const col = byName.get(name);
      if (!col) problems.push(`column ${table}.${name} has no PostgreSQL counterpart`);
      else if (!PG_TYPES.includes(col.type)) problems.push(`column ${table}.${name} is ${col.type} on PostgreSQL, which the copy does not convert to`);
      else columns.push({ name, type: col.type as PgType });
    }
    for (const c of pgCols) if (!liteCols.includes(c.c) && !PG_ONLY_COLUMNS[table]?.includes(c.c)) problems.push(`column ${table}.${c.c} is on PostgreSQL only`);
    const key = pgCols.filter((c) => c.pk !== null).sort((a, b) => a.pk! - b.pk!).map((c) => c.c);
    if (key.length === 0) problems.push(`table ${table} has no primary key on PostgreSQL`);
    plans.set(table, { name: table, columns, key, identity: pgCols.find((c) => c.identity !== '')?.c ?? null });
  }
  for (const t of pgTables.keys()) if (!liteTables.includes(t) && !PG_ONLY.has(t)) problems.push(`table ${t} is on PostgreSQL only`);
  if (problems.length > 0) throw new SchemaMismatchError(`the SQLite and PostgreSQL schemas differ: ${problems.join('; ')}`);

  const parents = (await target.query<{ child: string; parent: string }>(`
    SELECT k.conrelid::regclass::text AS child, k.confrelid::regclass::text AS parent
    FROM pg_constraint k WHERE k.contype = 'f' AND k.conrelid <> k.confrelid`)).rows;
  return { plans: foreignKeyOrder([...plans.values()], parents), skipped, targetTables: [...pgTables.keys()] };
}

function isSkipped(table: string): boolean {
  return table in SQLITE_ONLY || isSqliteInternal(table);
}

/** Parents first (a depth-first walk, names sorted so the order is stable); a cycle is a schema this copy cannot order. */
export function foreignKeyOrder(plans: TablePlan[], edges: Array<{ child: string; parent: string }>): TablePlan[] {
  const byName = new Map(plans.map((p) => [p.name, p]));
  const out: TablePlan[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: string[]): void => {
    if (state.get(name) === 'done' || !byName.has(name)) return;
    if (state.get(name) === 'visiting') throw new SchemaMismatchError(`foreign keys form a cycle: ${[...path, name].join(' -> ')}`);
    state.set(name, 'visiting');
    for (const e of edges.filter((x) => x.child === name).sort((a, b) => a.parent.localeCompare(b.parent))) visit(e.parent, [...path, name]);
    state.set(name, 'done');
    out.push(byName.get(name)!);
  };
  for (const name of [...byName.keys()].sort()) visit(name, []);
  return out;
}

/** The parameter type each column is sent as: jsonb goes as text and is cast in the SELECT, so PostgreSQL parses it once. */
const paramType = (type: PgType): string => (type === 'jsonb' ? 'text' : type);

/**
 * One statement per batch: every column sent as one array, zipped back into rows by unnest (one
 * round trip and one plan for thousands of rows, where a VALUES list needs a parameter per value
 * and stops at 65,535 of them).
 */
export function insertSql(plan: TablePlan): string {
  const names = plan.columns.map((c) => quote(c.name)).join(', ');
  const arrays = plan.columns.map((c, i) => `$${i + 1}::${paramType(c.type)}[]`).join(', ');
  const picks = plan.columns.map((c, i) => (c.type === 'jsonb' ? `u.c${i}::jsonb` : `u.c${i}`)).join(', ');
  const aliases = plan.columns.map((_, i) => `c${i}`).join(', ');
  return `INSERT INTO ${quote(plan.name)} (${names}) SELECT ${picks} FROM unnest(${arrays}) AS u(${aliases})`;
}

export class ValueError extends Error {}

/**
 * A SQLite value as the driver sends it for `type`: integers as decimal strings (they are read as
 * BigInt, so no id loses precision), 0/1 as booleans, BLOBs as Buffers. A value SQLite's loose
 * typing let in but PostgreSQL's column cannot hold throws (the copy names table, key and column).
 */
export function toParam(value: unknown, type: PgType): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'bigint':
    case 'integer':
    case 'smallint':
      if (typeof value === 'bigint') return value.toString();
      if (typeof value === 'number' && Number.isInteger(value)) return String(value);
      throw new ValueError(`${describe(value)} where PostgreSQL expects an integer (${type})`);
    case 'double precision':
      if (typeof value === 'number' || typeof value === 'bigint') return String(value);
      throw new ValueError(`${describe(value)} where PostgreSQL expects a number`);
    case 'boolean':
      if (value === 0n || value === 1n || value === 0 || value === 1) return Number(value) === 1;
      throw new ValueError(`${describe(value)} where PostgreSQL expects 0 or 1 (boolean)`);
    case 'text':
    case 'jsonb':
      if (typeof value === 'string') {
        // PostgreSQL's text cannot hold U+0000 (SQLite's can): refused by name, not by a bare driver error.
        if (value.includes('\u0000')) throw new ValueError(`text with a NUL character (U+0000), which PostgreSQL's ${type} cannot hold`);
        return value;
      }
      if (typeof value === 'number' || typeof value === 'bigint') return String(value);
      throw new ValueError(`${describe(value)} where PostgreSQL expects ${type}`);
    case 'bytea':
      if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      throw new ValueError(`${describe(value)} where PostgreSQL expects bytes (bytea)`);
    default:
      return assertNever(type, 'column type');
  }
}

function describe(value: unknown): string {
  if (value instanceof Uint8Array) return `a BLOB of ${value.byteLength} bytes`;
  return `${typeof value} ${JSON.stringify(typeof value === 'bigint' ? value.toString() : value)?.slice(0, 60)}`;
}
