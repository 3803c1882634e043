import pg from 'pg';

/** A connection or a pool: what a query function needs (node-postgres's own `query`). */
export type PgQueryable = Pick<pg.ClientBase, 'query'>;

/**
 * int8 (bigint) arrives from node-postgres as text, since it may exceed a JavaScript number.
 * Ours are ids and millisecond times, far below 2^53: read as numbers, and one that is not safe
 * fails loudly instead of losing digits.
 */
function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new Error(`a bigint beyond 2^53 in PostgreSQL: ${text}`);
  return n;
}

const INT8_OID = 20;

/** The type parsers of every connection Switchboard opens (per pool, not node-postgres's global table). */
export const pgTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

export interface PgPoolOptions {
  /** Connections this node keeps at most (node-postgres's `max`). */
  max?: number;
  /** Shown in pg_stat_activity: which node holds a connection. */
  applicationName?: string;
  /** An idle connection's error (the server restarted, the connection was killed); default: to stderr. */
  onIdleError?: (error: Error) => void;
}

export function openPgPool(url: string, options: PgPoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10, application_name: options.applicationName ?? 'switchboard', types: pgTypes });
  // node-postgres emits an idle connection's failure on the pool: unheard, it would end the process.
  // The pool drops that connection by itself; the next query opens another.
  pool.on('error', options.onIdleError ?? ((error) => console.error(`PostgreSQL: an idle connection failed: ${error.message}`)));
  return pool;
}

/** SQLSTATEs after which the same transaction may simply run again: a concurrent twin won a race. */
export const PG_RETRYABLE = new Set(['23505', '40001', '40P01']);

export const pgCodeOf = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : undefined;
