import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from '../../../../test/helpers/postgres.ts';
import { copyDatabase, createTemplate } from '../../../../test/helpers/pg-work-fixture.ts';
import { openDatabase } from '../db.ts';
import { createStore } from '../index.ts';
import { originOf, type PendingLane } from '../delivery-lanes.ts';
import type { DeliveryState } from '../deliveries.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../../shared/client-settings.ts';
import { openPgPool } from './pool.ts';
import { pgDeliveryQueries } from './delivery-queries.ts';
import { createPgWorkQueue } from './leases/pg-leases.ts';

/** The outbox's reads, as each store gives them, and what the suite needs to set the scene. */
interface Harness {
  reads: {
    pendingClients(): Promise<string[]> | string[];
    pendingLanes(clientId: string, limit: number): Promise<PendingLane[]> | PendingLane[];
    nextDueAt(): Promise<number | null> | number | null;
    stateOf(id: number): Promise<DeliveryState | undefined> | DeliveryState | undefined;
    cancel(id: number, reason: string, now: number): Promise<boolean> | boolean;
  };
  /** A pending delivery (its client and conversation made when new); returns its id. */
  add(clientId: string, conversationId: string, sendUrl: string, at: number): Promise<number>;
  /** Sets a delivery's state by hand (a try recorded elsewhere). */
  setState(id: number, state: DeliveryState): Promise<void>;
  row(id: number): Promise<{ state: string; lastError: string | null; updatedAt: number }>;
  close(): Promise<void>;
}

/** The same rules, run on both stores: the PostgreSQL outbox reads what the SQLite one reads. */
function suite(open: () => Promise<Harness>): void {
  it('pending clients and lanes, the next due time, a delivery’s state and the cancel of a pending one', async () => {
    const h = await open();
    try {
      const { reads } = h;
      assert.deepEqual(await reads.pendingClients(), []);
      assert.equal(await reads.nextDueAt(), null);
      const x1 = await h.add('a1', 'c1', 'http://x.test/hook', 500);
      const x2 = await h.add('a1', 'c2', 'http://x.test:80/other', 300);
      const x3 = await h.add('a1', 'c3', 'http://x.test/hook', 300);
      const y1 = await h.add('a1', 'c1', 'https://y.test/hook', 700);
      const b1 = await h.add('b2', 'c9', 'https://z.test:8443/in', 900);
      const b0 = await h.add('b2', 'c9', 'https://z.test:8443/in', 100);
      await h.setState(b0, 'sent');
      assert.deepEqual(await reads.pendingClients(), ['a1', 'b2']);
      assert.deepEqual(await reads.pendingLanes('a1', 64), [
        { origin: 'http://x.test:80', earliestId: x2, earliestAt: 300 },
        { origin: 'https://y.test:443', earliestId: y1, earliestAt: 700 },
      ]);
      assert.deepEqual(await reads.pendingLanes('a1', 1), [{ origin: 'http://x.test:80', earliestId: x2, earliestAt: 300 }]);
      assert.deepEqual(await reads.pendingLanes('b2', 64), [{ origin: 'https://z.test:8443', earliestId: b1, earliestAt: 900 }]);
      assert.deepEqual(await reads.pendingLanes('nobody', 64), []);
      assert.equal(await reads.nextDueAt(), 300);
      assert.equal(await reads.stateOf(x1), 'pending');
      assert.equal(await reads.stateOf(b0), 'sent');
      assert.equal(await reads.stateOf(999_999), undefined);
      assert.equal(await reads.cancel(x2, 'auto-reply stopped when the delivery was due', 1_000), true);
      assert.equal(await reads.cancel(x2, 'again', 2_000), false, 'only a pending one');
      assert.equal(await reads.cancel(b0, 'sent already', 2_000), false);
      assert.deepEqual(await h.row(x2), { state: 'cancelled', lastError: 'auto-reply stopped when the delivery was due', updatedAt: 1_000 });
      assert.equal(await reads.stateOf(x2), 'cancelled');
      assert.deepEqual(await reads.pendingLanes('a1', 64), [
        { origin: 'http://x.test:80', earliestId: x3, earliestAt: 300 },
        { origin: 'https://y.test:443', earliestId: y1, earliestAt: 700 },
      ]);
      for (const id of [x1, x3, y1]) await h.setState(id, 'dead');
      assert.deepEqual(await reads.pendingClients(), ['b2']);
      assert.equal(await reads.nextDueAt(), 900);
      await h.setState(b1, 'sent');
      assert.deepEqual(await reads.pendingClients(), []);
      assert.equal(await reads.nextDueAt(), null);
    } finally {
      await h.close();
    }
  });
}

describe('the outbox’s delivery reads: SQLite', () =>
  suite(async () => {
    const store = createStore(openDatabase(':memory:'));
    let replies = 0;
    return {
      reads: store.deliveries,
      async add(clientId, conversationId, sendUrl, at) {
        if (!store.clients.get(clientId)) store.clients.create(clientId, DEFAULT_CLIENT_SETTINGS, 0);
        if (!store.conversations.byId(conversationId)) {
          store.conversations.create({ id: conversationId, clientId, channel: 'im', peer: conversationId, groupId: null, customerId: null, autoReply: 'active', now: 0 });
        }
        const msgId = `r${++replies}`;
        const replyId = store.messages.insertReply({ conversationId, kind: 'auto', msgId, replyTo: [], afterMessageId: 0, content: 'x', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: 0 });
        return store.deliveries.insert({ replyId, replyMsgId: msgId, conversationId, clientId, sendUrl, messageInfo: '{}', state: 'pending', nextAttemptAt: at, createdAt: 0 });
      },
      async setState(id, state) {
        store.connection.prepare('UPDATE deliveries SET state = ? WHERE id = ?').run(state, id);
      },
      async row(id) {
        const d = store.deliveries.get(id)!;
        return { state: d.state, lastError: d.lastError, updatedAt: d.updatedAt };
      },
      close: async () => store.close(),
    };
  }));

describe('the outbox’s delivery reads: PostgreSQL', { skip: postgresSkipReason() }, () => {
  let server: PgServer;
  let made = 0;
  before(async () => {
    server = await startPostgres();
    await createTemplate(server.url, 'reads_template');
  });
  after(() => server?.stop());
  suite(async () => {
    const pool: pg.Pool = openPgPool(await copyDatabase(server.url, 'reads_template', `reads_${++made}`), { max: 2, onIdleError: () => {} });
    let replies = 0;
    return {
      reads: pgDeliveryQueries(pool),
      async add(clientId, conversationId, sendUrl, at) {
        await pool.query('INSERT INTO clients (id, created_at, updated_at) VALUES ($1, 0, 0) ON CONFLICT DO NOTHING', [clientId]);
        await pool.query("INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at) VALUES ($1, $2, 'im', $1, 0, 0) ON CONFLICT DO NOTHING", [conversationId, clientId]);
        const msgId = `r${++replies}`;
        const reply = await pool.query<{ id: number }>(
          "INSERT INTO replies (conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, created_at) VALUES ($1, 'auto', $2, '[]', 0, 'x', 0, 'kb', 0) RETURNING id",
          [conversationId, msgId],
        );
        const d = await pool.query<{ id: number }>(
          `INSERT INTO deliveries (reply_id, reply_msg_id, conversation_id, client_id, send_url, message_info, state, next_attempt_at, created_at, updated_at, origin)
           VALUES ($1, $2, $3, $4, $5, '{}', 'pending', $6, 0, 0, $7) RETURNING id`,
          [reply.rows[0]!.id, msgId, conversationId, clientId, sendUrl, at, originOf(sendUrl)],
        );
        return d.rows[0]!.id;
      },
      async setState(id, state) {
        await pool.query('UPDATE deliveries SET state = $1 WHERE id = $2', [state, id]);
      },
      async row(id) {
        const r = (await pool.query<{ state: string; last_error: string | null; updated_at: number }>('SELECT state, last_error, updated_at FROM deliveries WHERE id = $1', [id])).rows[0]!;
        return { state: r.state, lastError: r.last_error, updatedAt: r.updated_at };
      },
      close: () => pool.end(),
    };
  });

  it('a try out under a claim when the delivery was cancelled: counted (or sent, if accepted) only while the claim is still the row’s', async () => {
    const pool = openPgPool(await copyDatabase(server.url, 'reads_template', `reads_${++made}`), { max: 2, onIdleError: () => {} });
    try {
      await pool.query("INSERT INTO clients (id, created_at, updated_at) VALUES ('a1', 0, 0)");
      await pool.query("INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at) SELECT 'c' || i, 'a1', 'im', 'c' || i, 0, 0 FROM generate_series(1, 2) i");
      await pool.query("INSERT INTO replies (conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, created_at) SELECT 'c' || i, 'auto', 'r' || i, '[]', 0, 'x', 0, 'kb', 0 FROM generate_series(1, 2) i");
      await pool.query(
        `INSERT INTO deliveries (reply_id, reply_msg_id, conversation_id, client_id, send_url, message_info, state, next_attempt_at, created_at, updated_at, origin)
         SELECT id, msg_id, conversation_id, 'a1', 'http://x.test/hook', '{}', 'pending', 0, 0, 0, 'http://x.test:80' FROM replies ORDER BY id`,
      );
      const [one, two] = await createPgWorkQueue(pool).claimDeliveries('n', 10, 10, 60_000);
      await pool.query("UPDATE deliveries SET state = 'cancelled', last_error = 'by operator', updated_at = 20");
      const reads = pgDeliveryQueries(pool);
      const retry = { startedAt: 10, durationMs: 5, outcome: { kind: 'retry' as const, at: 5_010, status: 503, error: 'HTTP 503' }, now: 30 };
      assert.equal(await reads.recordAfterCancel(one!.id, { ...one!.lease, count: 2 }, retry), 'lost', 'another claim');
      assert.equal(await reads.recordAfterCancel(one!.id, one!.lease, retry), 'counted');
      assert.equal(await reads.recordAfterCancel(one!.id, one!.lease, retry), 'lost', 'recorded once: the claim ended with it');
      assert.equal(await reads.recordAfterCancel(two!.id, two!.lease, { ...retry, outcome: { kind: 'sent', status: 202 } }), 'sent');
      const got = (await pool.query('SELECT state, attempts, last_status, last_error, updated_at, lease_holder FROM deliveries ORDER BY id')).rows;
      assert.deepEqual(got, [
        { state: 'cancelled', attempts: 1, last_status: null, last_error: 'by operator', updated_at: 20, lease_holder: null },
        { state: 'sent', attempts: 1, last_status: 202, last_error: null, updated_at: 30, lease_holder: null },
      ]);
      const attempts = (await pool.query('SELECT delivery_id, attempt, status, error, outcome FROM delivery_attempts ORDER BY delivery_id')).rows;
      assert.deepEqual(attempts, [
        { delivery_id: one!.id, attempt: 1, status: 503, error: 'HTTP 503', outcome: 'retry' },
        { delivery_id: two!.id, attempt: 1, status: 202, error: null, outcome: 'sent' },
      ]);
    } finally {
      await pool.end();
    }
  });
});
