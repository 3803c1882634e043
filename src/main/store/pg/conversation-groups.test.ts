import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from '../../../../test/helpers/postgres.ts';
import { copyDatabase, createTemplate } from '../../../../test/helpers/pg-work-fixture.ts';
import { openDatabase } from '../db.ts';
import { createStore, type Store } from '../index.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../../shared/client-settings.ts';
import { CLIENT, conversationGroupsScenario, T0, type Groups, type Target } from './conversation-groups.fixture.ts';
import { pgConversationQueries } from './conversation-queries.ts';
import { pgIdempotencyQueries } from './idempotency-queries.ts';
import { pgIngestStore } from './ingest-queries.ts';
import { pgMessageQueries } from './message-queries.ts';
import { pgReplyStore } from './reply-queries.ts';
import { pgSearchIndexQueries } from './search-index-queries.ts';
import { pgStaffWaitQueries } from './staff-wait-queries.ts';
import { inPgTransaction } from './transaction.ts';
import { pgWorkspaceQueries } from './workspace-queries.ts';
import type { PgQueryable } from './pool.ts';

function pgGroups(db: PgQueryable): Groups {
  return {
    conversations: pgConversationQueries(db),
    messages: pgMessageQueries(db),
    workspace: pgWorkspaceQueries(db),
    staffWait: pgStaffWaitQueries(db),
    idempotency: pgIdempotencyQueries(db),
    searchIndex: pgSearchIndexQueries(db),
    people: pgIngestStore(db).people,
    deliveries: { insert: pgReplyStore(db).deliveries.insert, cancelForConversation: pgIngestStore(db).deliveries.cancelForConversation },
    kbAdd: async (question, now) =>
      Number((await db.query<{ id: string }>("INSERT INTO kb_entries (question, answer, created_at, updated_at) VALUES ($1, 'a', $2, $2) RETURNING id", [question, now])).rows[0]!.id),
  };
}

function sqliteTarget(store: Store): Target {
  const s: Groups = { ...store, kbAdd: (question, now) => store.kb.add(question, 'a', now) };
  return { s, tx: (work) => store.transactionAsync(() => work(s)) };
}

describe('conversations, messages, workspace, staff wait, idempotency and search index on PostgreSQL', { skip: postgresSkipReason() }, () => {
  let server: PgServer;
  let made = 0;
  const pools: pg.Pool[] = [];
  const dirs: string[] = [];
  before(async () => {
    server = await startPostgres();
    await createTemplate(server.url, 'convs_template');
  });
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.end()));
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  after(() => server?.stop());

  /**
   * A fresh database with the client. A plain node-postgres pool, without the int8 parser of
   * openPgPool: every bigint the groups read must be parsed by them.
   */
  async function freshPg(): Promise<pg.Pool> {
    const pool = new pg.Pool({ connectionString: await copyDatabase(server.url, 'convs_template', `convs_${++made}`), max: 4, statement_timeout: 5000 });
    pool.on('error', () => {});
    pools.push(pool);
    await pool.query('INSERT INTO clients (id, created_at, updated_at) VALUES ($1, $2, $2)', [CLIENT, T0]);
    return pool;
  }

  function freshSqlite(): Store {
    const dir = mkdtempSync(join(tmpdir(), 'sb-convs-'));
    dirs.push(dir);
    const store = createStore(openDatabase(join(dir, 'switchboard.db')));
    store.clients.create(CLIENT, DEFAULT_CLIENT_SETTINGS, T0);
    return store;
  }

  it('gives the same results as SQLite for every function of the groups', async () => {
    const store = freshSqlite();
    const sqlite = await conversationGroupsScenario(sqliteTarget(store));
    store.close();
    const pool = await freshPg();
    const onPg = await conversationGroupsScenario({ s: pgGroups(pool), tx: (work) => inPgTransaction(pool, (tx) => work(pgGroups(tx))) });
    assert.deepEqual(onPg, sqlite);
  });

  it('a read of what is unread waits for a customer message being stored, and counts it', async () => {
    const pool = await freshPg();
    const g = pgGroups(pool);
    await g.conversations.create({ id: 'c1', clientId: CLIENT, channel: 'im', peer: 'u1', groupId: null, customerId: 'u1', autoReply: 'active', now: T0 });
    const line = (msgId: string) => ({
      conversationId: 'c1', clientId: CLIENT, eventType: 'auto_dialog' as const, msgId, role: 'customer' as const, fromUserId: 'u1', fromUserType: 1, content: msgId,
      messageInfo: '{}', createTimestamp: null, receivedAt: T0, replyScheduled: null, replyReason: null,
    });
    const first = await g.messages.insert(line('m1'));
    await g.conversations.touchCustomer('c1', T0);
    // An ingest transaction stores a second customer message and holds the conversation's row.
    const ingest = await pool.connect();
    try {
      await ingest.query('BEGIN');
      const held = pgGroups(ingest);
      await held.messages.insert(line('m2'));
      await held.conversations.touchCustomer('c1', T0 + 1);
      const read = pgGroups(pool).conversations.markRead('c1', first);
      // The read is under way (its statement waits on the row); then the ingest commits.
      await waitForLockWait(pool);
      await ingest.query('COMMIT');
      assert.equal(await read, 1, 'the message stored meanwhile is unread');
    } finally {
      ingest.release();
    }
    assert.equal((await g.conversations.byId('c1'))?.unread, 1);
  });

  it('of two nodes flagging or settling the same row at once, one changes it', async () => {
    const pool = await freshPg();
    const other = new pg.Pool({ connectionString: String(pool.options.connectionString), max: 2 });
    pools.push(other);
    const [a, b] = [pgGroups(pool), pgGroups(other)];
    await a.conversations.create({ id: 'c1', clientId: CLIENT, channel: 'im', peer: 'u1', groupId: null, customerId: 'u1', autoReply: 'active', now: T0 });
    for (let round = 0; round < 10; round++) {
      const id = await a.messages.insert({
        conversationId: 'c1', clientId: CLIENT, eventType: 'auto_dialog', msgId: `m${round}`, role: 'customer', fromUserId: 'u1', fromUserType: 1, content: 'x',
        messageInfo: '{}', createTimestamp: null, receivedAt: T0 + round, replyScheduled: true, replyReason: 'scheduled',
      });
      const flags = await Promise.all([a.conversations.flagNeedsHuman('c1', T0 + round, 'handoff'), b.conversations.flagNeedsHuman('c1', T0 + round, 'no_answer')]);
      assert.equal(flags.filter(Boolean).length, 1, `round ${round}: one alert`);
      const settled = await Promise.all([a.messages.settleReply(id, 'answered', `r${round}`, null), b.messages.settleReply(id, 'stale', null, 'late')]);
      assert.equal(settled.filter(Boolean).length, 1, `round ${round}: one outcome`);
      assert.equal(await a.conversations.clearNeedsHuman('c1'), true);
    }
  });
});

/** Until some backend of this database waits on a lock (the statement under test), polling the server. */
async function waitForLockWait(pool: pg.Pool): Promise<void> {
  for (;;) {
    const r = await pool.query("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
    if (Number(r.rows[0].n) > 0) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
