import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'node:test';
import type pg from 'pg';
import { workNodes } from '../../../../test/helpers/pg-work-fixture.ts';
import type { IngestStore, StoreContract } from '../contract.ts';
import { openDatabase } from '../db.ts';
import { createStore } from '../index.ts';
import { clientSettingsSchema } from '../../../shared/client-settings.ts';
import { pgAccountQueries } from './account-queries.ts';
import { pgCannedQueries } from './canned-queries.ts';
import { pgClientAdminStore } from './client-queries.ts';
import { pgIngestStore } from './ingest-queries.ts';
import { pgSettingsQueries } from './settings-queries.ts';
import { pgTeamQueries } from './team-queries.ts';

/**
 * For the tests of the accounts, team, canned and settings groups on PostgreSQL (not imported by
 * the app): the same groups on a fresh SQLite store and on a fresh PostgreSQL database, with what
 * a scenario needs to seed conversations on either, so one scenario body runs on both.
 */
export interface TeamHarness extends Pick<StoreContract, 'accounts' | 'team' | 'canned' | 'settings'> {
  seed: IngestStore;
  addClient(id: string, now: number): Promise<void>;
  /** The console's shared read marker of a conversation (what adoptSharedMarkers copies). */
  sharedMarker(conversationId: string, upToId: number): Promise<void>;
  close(): Promise<void>;
}

export function openSqliteHarness(): TeamHarness {
  const dir = mkdtempSync(join(tmpdir(), 'sb-pg-team-'));
  const store = createStore(openDatabase(join(dir, 'switchboard.db')));
  return {
    accounts: store.accounts,
    team: store.team,
    canned: store.canned,
    settings: store.settings,
    seed: store,
    addClient: async (id, now) => store.clients.create(id, clientSettingsSchema.parse({}), now),
    sharedMarker: async (conversationId, upToId) => void store.conversations.markRead(conversationId, upToId),
    close: async () => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function pgHarnessOn(db: pg.Pool | pg.PoolClient): Omit<TeamHarness, 'close'> {
  return {
    accounts: pgAccountQueries(db),
    team: pgTeamQueries(db),
    canned: pgCannedQueries(db),
    settings: pgSettingsQueries(db),
    seed: pgIngestStore(db),
    addClient: async (id, now) => {
      await pgClientAdminStore(db).clients.create(id, clientSettingsSchema.parse({}), now);
    },
    sharedMarker: async (conversationId, upToId) => {
      await db.query('UPDATE conversations SET last_read_message_id = greatest(last_read_message_id, $1) WHERE id = $2', [upToId, conversationId]);
    },
  };
}

export interface OpenTransaction {
  client: pg.PoolClient;
  /** The server process of its connection (pg_locks.pid). */
  pid: number;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

export interface PgTeamHarness extends TeamHarness {
  pool: pg.Pool;
  /** A transaction on a connection of its own, held open until commit or rollback (a node in the middle of its work). */
  transaction(): Promise<OpenTransaction>;
}

/**
 * In a describe block: one PostgreSQL server for the file; `open()` gives a fresh migrated database
 * (a plain node-postgres pool: bigint arrives as text, the harder case for the row parsing).
 * A transaction a failed test left open is dropped after it, or the pool's end would wait on it.
 */
export function pgHarnesses(prefix: string): () => Promise<PgTeamHarness> {
  const open = new Set<pg.PoolClient>();
  // Registered before workNodes' own afterEach (which ends the pools): hooks run in that order.
  afterEach(() => {
    for (const client of open) client.release(true);
    open.clear();
  });
  const nodes = workNodes(prefix);
  return async () => {
    const [node] = await nodes(1);
    const pool = node!.pool;
    const transaction = async (): Promise<OpenTransaction> => {
      const client = await pool.connect();
      open.add(client);
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await client.query('BEGIN');
      const end = async (how: string) => {
        open.delete(client);
        try {
          await client.query(how);
        } finally {
          client.release();
        }
      };
      return { client, pid, commit: () => end('COMMIT'), rollback: () => end('ROLLBACK') };
    };
    return { ...pgHarnessOn(pool), pool, transaction, close: async () => {} };
  };
}

/**
 * Resolves 'blocked' once backend `pid` waits on a lock, or 'done' if `pending` settles first:
 * a test sees the second of two racing statements wait for the first instead of both going ahead.
 */
export async function blockedOrDone(pool: pg.Pool, pid: number, pending: unknown): Promise<'blocked' | 'done'> {
  let settled = false;
  void Promise.resolve(pending).then(
    () => (settled = true),
    () => (settled = true),
  );
  for (;;) {
    if (settled) return 'done';
    const r = await pool.query("SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted", [pid]);
    if (r.rowCount) return 'blocked';
    // One round trip to the server between looks: no timer, and it stops as soon as either happens.
  }
}
