import { after, afterEach, before } from 'node:test';
import pg from 'pg';
import { startPostgres, type PgServer } from './postgres.ts';
import { createPgWorkQueue, type PgWorkQueue } from '../../src/main/store/pg/leases/pg-leases.ts';
import { migratePg } from '../../src/main/store/pg/migrate.ts';
import type { Queryable } from '../../src/main/store/pg/leases/lease.ts';

/**
 * Test and bench fixtures for the PostgreSQL work queue: a migrated template database that each
 * test copies (CREATE DATABASE … TEMPLATE is ~0.1 s; migrating afresh is several times that),
 * and deliveries seeded in bulk (src/main/store/pg/leases/*.test.ts, bench/pg-leases.ts).
 */

/** Creates `name`, migrated to the latest version, to be copied by `copyDatabase`. */
export async function createTemplate(serverUrl: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const c = new pg.Client({ connectionString: urlOf(serverUrl, name) });
  await c.connect();
  try {
    await migratePg(c);
  } finally {
    await c.end();
  }
}

/** A fresh copy of `template`; returns its URL. */
export async function copyDatabase(serverUrl: string, template: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  } finally {
    await admin.end();
  }
  return urlOf(serverUrl, name);
}

export const urlOf = (serverUrl: string, database: string): string => serverUrl.replace(/\/[^/]*$/, `/${database}`);

export interface SeedOptions {
  conversations: number;
  perConversation: number;
  /** Every delivery's next_attempt_at is spread over [dueFrom, dueTo], unrelated to its id. */
  dueFrom: number;
  dueTo: number;
  /** Conversation ids are `${prefix}${n}`; another prefix seeds more conversations. */
  prefix?: string;
  /** The lane: client id and send_url origin. */
  clientId?: string;
  origin?: string;
}

/**
 * One client, `conversations` conversations with `perConversation` pending deliveries each, ids
 * given round-robin across conversations (as replies arrive interleaved), the due times
 * scrambled so that a later delivery of a conversation is often due before an earlier one.
 */
export async function seedDeliveries(db: Queryable, o: SeedOptions): Promise<void> {
  const prefix = o.prefix ?? 'v';
  const clientId = o.clientId ?? 'c1';
  const origin = o.origin ?? 'http://receiver:80';
  await db.query(`INSERT INTO clients (id, created_at, updated_at) VALUES ($1, 1, 1) ON CONFLICT DO NOTHING`, [clientId]);
  await db.query(
    `INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at)
     SELECT $1 || i, $2, 'im', $1 || i, 1, 1 FROM generate_series(1, $3::int) i`,
    [prefix, clientId, o.conversations],
  );
  await db.query(
    `INSERT INTO replies (conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, created_at)
     SELECT $1 || c, 'auto', $1 || c || '-' || k, '[]', 0, 'x', 0, 'kb', 1
     FROM generate_series(1, $3::int) k, generate_series(1, $2::int) c ORDER BY k, c`,
    [prefix, o.conversations, o.perConversation],
  );
  await db.query(
    `INSERT INTO deliveries (reply_id, reply_msg_id, conversation_id, client_id, send_url, message_info, state, next_attempt_at, created_at, updated_at, origin)
     SELECT r.id, r.msg_id, r.conversation_id, $2, $3 || '/hook', '{}', 'pending',
       $4::bigint + (hashint4(r.id::int)::bigint & 2147483647) % ($5::bigint - $4::bigint + 1), 1, 1, $3
     FROM replies r WHERE r.conversation_id LIKE $1 || '%' ORDER BY r.id`,
    [prefix, clientId, origin, o.dueFrom, o.dueTo],
  );
}

export interface WorkNode {
  pool: pg.Pool;
  q: PgWorkQueue;
}

/**
 * For a describe block of the lease tests: one server and a migrated template for the file, and
 * `nodes(n)`, a fresh database copied from it with `n` nodes on it, each a pool of its own (as
 * separate processes would be), ended after each test.
 */
export function workNodes(prefix: string): (n: number) => Promise<WorkNode[]> {
  let server: PgServer;
  let databases = 0;
  const pools: pg.Pool[] = [];
  before(async () => {
    server = await startPostgres();
    await createTemplate(server.url, 'work_template');
  });
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.end()));
  });
  after(async () => {
    await server?.stop();
  });
  return async (n) => {
    const url = await copyDatabase(server.url, 'work_template', `${prefix}_${++databases}`);
    return Array.from({ length: n }, () => {
      // A claim that waited on another's lock fails the test in seconds rather than hanging it.
      const pool = new pg.Pool({ connectionString: url, max: 3, statement_timeout: 5000 });
      // The server's shutdown at the end ends idle connections still closing: heard, not thrown.
      pool.on('error', () => {});
      pools.push(pool);
      return { pool, q: createPgWorkQueue(pool) };
    });
  };
}

/**
 * `pool`, except that the first run of a statement with text `sql` commits and then fails as if
 * the connection dropped around its COMMIT: the rows it changed stay changed, and the caller gets
 * an error instead of them (a claim this node holds without knowing it). `lost()` counts those.
 */
export function losingFirstAnswer<P extends Queryable>(pool: P, sqls: readonly string[]): P & { lost(): number } {
  let lost = 0;
  return new Proxy(pool, {
    get(target, key) {
      if (key === 'lost') return () => lost;
      if (key === 'query') {
        return async (text: string, values?: unknown[]) => {
          const r = await target.query(text, values);
          if (lost === 0 && sqls.includes(text)) {
            lost++;
            throw new Error('Connection terminated unexpectedly');
          }
          return r;
        };
      }
      const v: unknown = Reflect.get(target, key);
      return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(target) : v;
    },
  }) as P & { lost(): number };
}
