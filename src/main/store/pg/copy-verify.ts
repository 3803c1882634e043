import type { DatabaseSync } from 'node:sqlite';
import type { ClientBase } from 'pg';
import { assertNever } from '../../../shared/assert-never.ts';
import { quote, toParam, type PgType, type TablePlan } from './copy-tables.ts';

/**
 * `store copy`'s check, run inside the copy's transaction before it commits: every table's row
 * count on both sides, and up to `sampleRows` rows per table spread evenly over its key order
 * (every n-th row), compared column by column after both sides are normalised to one text form.
 */

export interface Verified {
  /** Rows compared column by column, all tables together. */
  sampled: number;
  /** One line per difference, naming table, key and column; empty when the copy matches. */
  mismatches: string[];
}

/** Differences listed per table at most, so a broken table does not bury the others. */
const PER_TABLE = 5;

export async function verifyCopy(source: DatabaseSync, target: ClientBase, plans: TablePlan[], sampleRows: number): Promise<Verified> {
  const mismatches: string[] = [];
  let sampled = 0;
  for (const plan of plans) {
    const table = quote(plan.name);
    const liteCount = Number((source.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
    const pgCount = Number((await target.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
    if (liteCount !== pgCount) mismatches.push(`${plan.name}: SQLite has ${liteCount} rows, PostgreSQL ${pgCount}`);
    if (liteCount === 0) continue;

    const columns = plan.columns.map((c) => quote(c.name)).join(', ');
    const order = plan.key.map(quote).join(', ');
    const keyCols = plan.key.map((k) => plan.columns.find((c) => c.name === k)!);
    const rows = sample(source, plan, liteCount, sampleRows);
    const keyOf = (row: Record<string, unknown>, side: Side): string => keyCols.map((c) => normal(row[c.name], c.type, side)).join('\u0001');
    const arrays = keyCols.map((c) => rows.map((r) => toParam(r[c.name], c.type)));
    const match = keyCols.map((c, i) => `$${i + 1}::${c.type === 'jsonb' ? 'text' : c.type}[]`).join(', ');
    const found = await target.query<Record<string, unknown>>(`SELECT ${columns} FROM ${table} WHERE (${order}) IN (SELECT * FROM unnest(${match}))`, arrays);
    const pgRows = new Map(found.rows.map((r) => [keyOf(r, 'pg'), r]));

    let listed = 0;
    const note = (line: string): void => {
      if (listed++ < PER_TABLE) mismatches.push(line);
    };
    for (const row of rows) {
      const key = keyCols.map((c) => `${c.name}=${normal(row[c.name], c.type, 'sqlite')}`).join(', ');
      const pgRow = pgRows.get(keyOf(row, 'sqlite'));
      if (!pgRow) {
        note(`${plan.name} (${key}): missing on PostgreSQL`);
        continue;
      }
      for (const c of plan.columns) {
        const a = normal(row[c.name], c.type, 'sqlite');
        const b = normal(pgRow[c.name], c.type, 'pg');
        if (a !== b) note(`${plan.name} (${key}) column ${c.name}: SQLite ${clip(a)}, PostgreSQL ${clip(b)}`);
      }
    }
    if (listed > PER_TABLE) mismatches.push(`${plan.name}: ${listed - PER_TABLE} more differences`);
    sampled += rows.length;
  }
  // The rollup triggers were off during the copy: they must be on in what gets committed.
  const off = await target.query<{ t: string; name: string }>(
    "SELECT tgrelid::regclass::text AS t, tgname AS name FROM pg_trigger WHERE NOT tgisinternal AND tgenabled = 'D' ORDER BY 1, 2",
  );
  for (const r of off.rows) mismatches.push(`trigger ${r.name} on ${r.t} is disabled`);
  return { sampled, mismatches };
}

/**
 * Up to `size` rows spread over the table. A table keyed by one integer (an id): the first row at
 * or after each of `size` points evenly spaced between the smallest and largest id, one index
 * seek each (on the 1,000,000-entry store the whole-table pass below took most of the check's
 * 19 s). Other keys: one pass in key order keeping every n-th row.
 */
function sample(source: DatabaseSync, plan: TablePlan, count: number, size: number): Array<Record<string, unknown>> {
  const table = quote(plan.name);
  const columns = plan.columns.map((c) => quote(c.name)).join(', ');
  const key = plan.columns.find((c) => c.name === plan.key[0]);
  if (plan.key.length === 1 && (key?.type === 'bigint' || key?.type === 'integer')) {
    const id = quote(key.name);
    const range = source.prepare(`SELECT min(${id}) AS lo, max(${id}) AS hi FROM ${table}`);
    range.setReadBigInts(true);
    const { lo, hi } = range.get() as { lo: bigint; hi: bigint };
    const at = source.prepare(`SELECT ${columns} FROM ${table} WHERE ${id} >= ? ORDER BY ${id} LIMIT 1`);
    at.setReadBigInts(true);
    const points = Math.min(size, count);
    const seen = new Set<bigint>();
    const rows: Array<Record<string, unknown>> = [];
    for (let i = 0; i < points; i++) {
      const point = points === 1 ? lo : lo + ((hi - lo) * BigInt(i)) / BigInt(points - 1);
      const row = at.get(point) as Record<string, unknown> | undefined;
      if (row && !seen.has(row[key.name] as bigint)) {
        seen.add(row[key.name] as bigint);
        rows.push(row);
      }
    }
    return rows;
  }
  const step = Math.max(1, Math.ceil(count / size));
  const pick = source.prepare(`SELECT ${columns} FROM (SELECT ${columns}, row_number() OVER (ORDER BY ${plan.key.map(quote).join(', ')}) AS sample_n FROM ${table}) WHERE (sample_n - 1) % ${step} = 0`);
  pick.setReadBigInts(true);
  return pick.all() as Array<Record<string, unknown>>;
}

type Side = 'sqlite' | 'pg';

/**
 * One text form per value (null for SQL NULL), whichever side it came from: SQLite gives integers as BigInt, JSON as
 * its stored text and BLOBs as Uint8Array; node-postgres gives int8 as a string, smaller integers
 * and floats as numbers, jsonb parsed and bytea as a Buffer. JSON is compared parsed with sorted
 * keys, since jsonb does not keep key order or spacing.
 */
export function normal(value: unknown, type: PgType, side: Side): string | null {
  // SQL NULL stays null, apart from any text (the string "null" included). node-postgres reads a
  // jsonb JSON null as null too, so there the two cannot be told apart.
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'bigint':
    case 'integer':
    case 'smallint':
    case 'text':
      return String(value);
    case 'double precision':
      return String(Number(value));
    case 'boolean':
      return String(value === true || value === 1 || value === 1n);
    case 'jsonb':
      try {
        return canonicalJson(side === 'sqlite' ? JSON.parse(String(value)) : value);
      } catch {
        return `invalid JSON ${String(value)}`;
      }
    case 'bytea':
      return `\\x${Buffer.from(value as Uint8Array).toString('hex')}`;
    default:
      return assertNever(type, 'column type');
  }
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const clip = (s: string | null): string => (s === null ? 'NULL' : JSON.stringify(s.length > 80 ? `${s.slice(0, 77)}…` : s));
