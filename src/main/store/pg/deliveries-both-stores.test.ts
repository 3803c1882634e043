import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from '../../../../test/helpers/postgres.ts';
import { copyDatabase, createTemplate } from '../../../../test/helpers/pg-work-fixture.ts';
import { openDatabase } from '../db.ts';
import { createStore } from '../index.ts';
import type { StoreContract } from '../contract.ts';
import type { DeliveryKind } from '../deliveries.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../../shared/client-settings.ts';
import { openPgPool } from './pool.ts';
import { pgDeliveryQueries } from './delivery-queries.ts';
import { pgIngestStore } from './ingest-queries.ts';
import { deliveryScenario, type Scene } from './deliveries-scenario.fixture.ts';
import { createPgWorkQueue } from './leases/pg-leases.ts';

/** An operator's answer names its operator (the replies table requires it). */
const operatorOf = (kind: DeliveryKind) => (kind === 'operator' ? { operator: { id: 'op-1', name: '王小明' } } : {});

function sqliteScene(): Scene {
  const dir = mkdtempSync(join(tmpdir(), 'sb-deliveries-'));
  const store = createStore(openDatabase(join(dir, 'switchboard.db')));
  return {
    deliveries: store.deliveries,
    async reply(clientId, conversationId, kind, msgId) {
      if (!store.clients.get(clientId)) store.clients.create(clientId, DEFAULT_CLIENT_SETTINGS, 0);
      if (!store.conversations.byId(conversationId)) {
        store.conversations.create({ id: conversationId, clientId, channel: 'im', peer: conversationId, groupId: null, customerId: null, autoReply: 'active', now: 0 });
      }
      return store.messages.insertReply({ conversationId, kind, msgId, replyTo: [], afterMessageId: 0, content: '您好', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: 0, ...operatorOf(kind) });
    },
    close: async () => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function pgScene(pool: pg.Pool): Scene {
  const ingest = pgIngestStore(pool);
  return {
    deliveries: pgDeliveryQueries(pool),
    async reply(clientId, conversationId, kind, msgId) {
      await pool.query('INSERT INTO clients (id, created_at, updated_at) VALUES ($1, 0, 0) ON CONFLICT DO NOTHING', [clientId]);
      await ingest.conversations.create({ id: conversationId, clientId, channel: 'im', peer: conversationId, groupId: null, customerId: null, autoReply: 'active', now: 0 });
      return ingest.messages.insertReply({ conversationId, kind, msgId, replyTo: [], afterMessageId: 0, content: '您好', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: 0, ...operatorOf(kind) });
    },
    close: () => pool.end(),
  };
}

describe('deliveries on SQLite: every function of the group', () => {
  it('gives the expected results', async () => {
    const s = sqliteScene();
    try {
      await deliveryScenario(s);
    } finally {
      await s.close();
    }
  });
});

describe('deliveries on PostgreSQL', { skip: postgresSkipReason() }, () => {
  let server: PgServer;
  let made = 0;
  before(async () => {
    server = await startPostgres();
    await createTemplate(server.url, 'deliveries_template');
  });
  after(() => server?.stop());
  const freshPool = async (max = 2): Promise<pg.Pool> =>
    openPgPool(await copyDatabase(server.url, 'deliveries_template', `deliveries_${++made}`), { max, onIdleError: () => {} });

  it('gives what SQLite gives, function by function', async () => {
    const lite = sqliteScene();
    const pgs = pgScene(await freshPool());
    try {
      const expected = await deliveryScenario(lite);
      const got = await deliveryScenario(pgs);
      assert.deepEqual(got, expected);
    } finally {
      await lite.close();
      await pgs.close();
    }
  });

  /** A delivery of its own conversation, due at `at`; `tried` records one failed try first (retrying). */
  async function seed(pool: pg.Pool, conversationId: string, at: number, tried = false): Promise<number> {
    const s = pgScene(pool);
    const replyId = await s.reply('a', conversationId, 'auto', `m-${conversationId}`);
    const id = await s.deliveries.insert({ replyId, replyMsgId: `m-${conversationId}`, conversationId, clientId: 'a', sendUrl: 'http://x.test/hook', messageInfo: '{}', state: 'pending', nextAttemptAt: 0, createdAt: 0 });
    if (tried) {
      const failed = { deliveryId: id, attempt: 1, startedAt: 0, durationMs: 1, status: 503, error: 'HTTP 503', outcome: 'retry' as const, state: 'pending' as const };
      assert.equal(await s.deliveries.recordAttempt({ ...failed, nextAttemptAt: at, now: 1 }), true);
    }
    return id;
  }

  const leaseOf = async (pool: pg.Pool, id: number) =>
    (await pool.query<{ lease_holder: string | null; state: string; attempts: number; next_attempt_at: number }>('SELECT lease_holder, state, attempts, next_attempt_at FROM deliveries WHERE id = $1', [id])).rows[0]!;

  it('the console’s actions on a delivery a node holds leave it to its holder: no other node sends it, the holder’s record lands once', async () => {
    const pool = await freshPool(4);
    try {
      const d = pgDeliveryQueries(pool);
      const q = createPgWorkQueue(pool);
      const retrying = await seed(pool, 'c1', 100, true);
      const stopped = await seed(pool, 'c2', 100);
      const claimed = await q.claimDeliveries('n1', 100, 10, 60_000);
      const one = claimed.find((c) => c.id === retrying);
      const two = claimed.find((c) => c.id === stopped);
      assert.equal(claimed.length, 2);
      assert.equal(await d.leased(retrying, 150), true);
      assert.equal(await d.leased(retrying, 100 + 60_000), false, 'a lease run out is nobody’s');

      // Retry now of the one being tried: due already, so only its updated_at moves (as on SQLite).
      assert.equal(await d.retryNow(retrying, 200), true);
      assert.deepEqual(await leaseOf(pool, retrying), { lease_holder: 'n1', state: 'pending', attempts: 1, next_attempt_at: 100 });
      // A record without the claim does not overwrite the holder's try.
      const unleased = { deliveryId: retrying, attempt: 2, startedAt: 200, durationMs: 1, status: 200, error: null, outcome: 'sent' as const, state: 'sent' as const, nextAttemptAt: 200, now: 200 };
      assert.equal(await d.recordAttempt(unleased), false);
      assert.deepEqual(await d.attempts(retrying), [{ attempt: 1, startedAt: 0, durationMs: 1, status: 503, error: 'HTTP 503', outcome: 'retry' }]);

      // Cancel of the retrying one, a stop of the other's conversation and its Undo: all while n1 holds both.
      assert.equal(await d.cancelFailed(retrying, 'cancelled by 王 from the console', 300), true);
      assert.equal(await d.cancelForConversation('c2', 'auto-reply stopped by the console', 300), 1);
      assert.equal(await d.restoreCancelled('c2', 'auto-reply stopped by the console', 300, 400), 1);
      assert.equal((await leaseOf(pool, stopped)).lease_holder, 'n1', 'pending again, still its holder’s');
      assert.deepEqual(await q.claimDeliveries('n2', 400, 10, 60_000), [], 'another node sends neither');

      // The holder's tries land: the restored one is sent once, the cancelled one's try counted.
      const at = { startedAt: 100, durationMs: 5, now: 500 };
      assert.equal(await q.completeDelivery(stopped, two!.lease, { ...at, outcome: { kind: 'sent', status: 202 } }), true);
      assert.equal(await q.completeDelivery(retrying, one!.lease, { ...at, outcome: { kind: 'retry', at: 9_000, status: 503, error: 'HTTP 503' } }), false);
      assert.equal(await d.recordAfterCancel(retrying, one!.lease, { ...at, outcome: { kind: 'retry', at: 9_000, status: 503, error: 'HTTP 503' } }), 'counted');
      assert.deepEqual(await leaseOf(pool, stopped), { lease_holder: null, state: 'sent', attempts: 1, next_attempt_at: 500 });
      assert.deepEqual(await leaseOf(pool, retrying), { lease_holder: null, state: 'cancelled', attempts: 2, next_attempt_at: 100 });
      assert.equal((await d.attempts(stopped)).length, 1);
      assert.deepEqual(await q.claimDeliveries('n2', 1_000_000, 10, 60_000), []);
    } finally {
      await pool.end();
    }
  });

  it('a dead delivery retried goes to one node; an unleased record ends a lease run out', async () => {
    const pool = await freshPool(4);
    try {
      const d = pgDeliveryQueries(pool);
      const q = createPgWorkQueue(pool);
      const id = await seed(pool, 'c1', 100);
      const [c] = await q.claimDeliveries('n1', 100, 10, 1_000);
      assert.equal(await q.completeDelivery(id, c!.lease, { startedAt: 100, durationMs: 1, now: 200, outcome: { kind: 'dead', status: 410, error: 'HTTP 410' } }), true);
      assert.deepEqual(await d.deadIds(null, 10), [id]);
      assert.equal(await d.retry(id, 300), true);
      const [again] = await q.claimDeliveries('n2', 300, 10, 1_000);
      assert.equal(again?.id, id);
      assert.deepEqual(await q.claimDeliveries('n1', 300, 10, 1_000), []);
      // n2 went quiet: once its lease ran out, a record without a claim lands and ends it.
      const record = { deliveryId: id, attempt: 2, startedAt: 1_400, durationMs: 1, status: 200, error: null, outcome: 'sent' as const, state: 'sent' as const, nextAttemptAt: 1_400 };
      assert.equal(await d.recordAttempt({ ...record, now: 1_299 }), false, 'n2’s lease still runs');
      assert.equal(await d.recordAttempt({ ...record, now: 1_300 }), true);
      assert.deepEqual(await leaseOf(pool, id), { lease_holder: null, state: 'sent', attempts: 2, next_attempt_at: 1_400 });
    } finally {
      await pool.end();
    }
  });

  it('two nodes acting on one delivery at once change it once', async () => {
    const pool = await freshPool(4);
    try {
      const id = await seed(pool, 'c1', 100, true);
      // Until b waits on a's lock (pg_stat_activity), so that the two statements truly overlap.
      const blocked = async (): Promise<void> => {
        while ((await pool.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rowCount === 0);
      };
      const race = async (act: (d: StoreContract['deliveries']) => Promise<unknown>): Promise<unknown[]> => {
        const a = await pool.connect();
        const b = await pool.connect();
        try {
          await a.query('BEGIN');
          const first = await act(pgDeliveryQueries(a));
          // b's statement waits on a's row lock, then re-checks its WHERE on a's committed row.
          const second = act(pgDeliveryQueries(b));
          await blocked();
          await a.query('COMMIT');
          return [first, await second];
        } finally {
          a.release();
          b.release();
        }
      };
      assert.deepEqual(await race((d) => Promise.resolve(d.cancelFailed(id, 'by one', 200))), [true, false]);
      assert.equal((await pgDeliveryQueries(pool).get(id))?.lastError, 'by one');
      await pool.query("UPDATE deliveries SET state = 'dead' WHERE id = $1", [id]);
      assert.deepEqual(await race((d) => Promise.resolve(d.retry(id, 300))), [true, false]);
      assert.deepEqual(await race((d) => Promise.resolve(d.cancelForConversation('c1', 'stop', 400))), [1, 0]);
      assert.deepEqual(await race((d) => Promise.resolve(d.restoreCancelled('c1', 'stop', 400, 500))), [1, 0]);
    } finally {
      await pool.end();
    }
  });
});
