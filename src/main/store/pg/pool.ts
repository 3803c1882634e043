import { createHash } from 'node:crypto';
import pg from 'pg';
import { z } from 'zod';

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

/**
 * A bigint column as re-read by zod: a number (this module's pools parse int8) or its text (a
 * plain node-postgres client, count(*) and sum() from another pool), safe integers only.
 */
export const int8 = z
  .union([z.string().regex(/^-?\d+$/), z.number().int()])
  .transform(Number)
  .pipe(z.number().int().refine(Number.isSafeInteger, 'beyond 2^53'));

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
  /**
   * How long a query waits for a connection (a new one's handshake, or a free one in a full
   * pool) before it fails, so that a request meets a 503 rather than waiting on a database that
   * is down. Default 5 s.
   */
  connectTimeoutMs?: number;
  /**
   * How long a query may wait for the server's answer before it fails (node-postgres's
   * query_timeout; the connection is then dropped), so that a server that stops answering
   * without closing its connections (a partition, a frozen host, a failover whose old primary
   * vanished) costs a request a 503 rather than hanging it and every loop of the node. Default
   * 15 s; 0 for none (migrations, whose DDL may run longer; the CLI, which its operator can stop).
   */
  queryTimeoutMs?: number;
}

/**
 * A connection that prepares each parameterized statement once (a named statement per text,
 * kept by the server for the connection's life), instead of sending it to be parsed and planned
 * again on every call: the same few dozen statements run for every message. A statement without
 * parameters (DDL, BEGIN, COMMIT, a migration's several statements) goes as it is.
 */
class PreparingClient extends pg.Client {
  override query(config: unknown, values?: unknown, callback?: unknown): never {
    if (typeof config === 'string' && Array.isArray(values)) {
      const name = `sb_${createHash('sha1').update(config).digest('hex').slice(0, 20)}`;
      return (super.query as (...args: unknown[]) => never)({ name, text: config, values }, callback);
    }
    return (super.query as (...args: unknown[]) => never)(config, values, callback);
  }
}

export function openPgPool(url: string, options: PgPoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    Client: PreparingClient,
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'switchboard',
    types: pgTypes,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    ...((options.queryTimeoutMs ?? 15_000) > 0 ? { query_timeout: options.queryTimeoutMs ?? 15_000 } : {}),
    // A dead peer is found by the kernel's keepalive probes, not after the retransmission time-out (minutes).
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // node-postgres emits an idle connection's failure on the pool: unheard, it would end the process.
  // The pool drops that connection by itself; the next query opens another.
  const onError = options.onIdleError ?? ((error: Error) => console.error(`PostgreSQL: an idle connection failed: ${error.message}`));
  pool.on('error', onError);
  // A connection checked out between two queries (a transaction while JavaScript works) that the
  // server ends (a restart, a failover) emits 'error' on its client, not the pool's: unheard, that
  // ends the process. Heard here, the holder's next query fails instead, as a 503 or a retry.
  pool.on('connect', (client) => client.on('error', (error) => onError(error)));
  return pool;
}

/** SQLSTATEs after which the same transaction may simply run again: a concurrent twin won a race. */
export const PG_RETRYABLE = new Set(['23505', '40001', '40P01']);

export const pgCodeOf = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : undefined;

/** Network errors of a socket to the server: the database is down, restarting or unreachable. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * True when an error means PostgreSQL cannot be reached right now, rather than that a request
 * or a query is wrong: the node answers 503 with Retry-After and recovers by itself when the
 * server is back (the pool opens fresh connections). SQLSTATE class 08 (connection exception),
 * class 53 (too many connections, disk full, out of memory), 57P01–57P04 (the server shutting
 * down, crashed, starting, or a database being dropped), 25006 (read-only: a failover to a
 * standby not yet promoted), and node-postgres's own errors for a connection that ended, could
 * not be had in time, or answered no query within the query time-out.
 */
export function isPgUnavailable(error: unknown): boolean {
  const code = pgCodeOf(error);
  if (code !== undefined && (NETWORK_CODES.has(code) || code.startsWith('08') || code.startsWith('53') || ['57P01', '57P02', '57P03', '57P04', '25006'].includes(code))) return true;
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed|Query read timeout|the database system is (starting up|shutting down)/i.test(message);
}

/** A store URL as logs and messages show it: the password replaced. */
export function redactedStoreUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}
