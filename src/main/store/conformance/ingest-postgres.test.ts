import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from '../../../../test/helpers/postgres.ts';
import { migratePg } from '../pg/migrate.ts';
import { openPgPool } from '../pg/pool.ts';
import { pgIngestStore } from '../pg/ingest-queries.ts';
import { createPgIngestRunner } from '../../conversations/pg-ingest-runner.ts';
import { CLIENT, ingestConformance, request, T0, type IngestHarness } from './ingest-conformance.ts';

const skip = postgresSkipReason();

describe('ingest conformance: PostgreSQL', { skip }, () => {
  let server: PgServer;
  let made = 0;
  before(async () => {
    server = await startPostgres();
    // Migrated once; each test's database is a copy of it (CREATE DATABASE … TEMPLATE), a fraction of a migration's time.
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query("CREATE DATABASE ingest_template TEMPLATE template0 ENCODING 'UTF8' LC_CTYPE 'C.UTF-8' LC_COLLATE 'C.UTF-8'");
    await admin.end();
    const template = new pg.Client({ connectionString: urlOf('ingest_template') });
    await template.connect();
    await migratePg(template);
    await template.query("INSERT INTO clients (id, created_at, updated_at) VALUES ($1, $2, $2)", [CLIENT, T0]);
    await template.end();
  });
  after(() => server?.stop());

  const urlOf = (db: string): string => server.url.replace(/\/postgres$/, `/${db}`);

  /** A fresh database with the client, and `nodes` pools on it (each pool a node). */
  async function fresh(nodes = 1): Promise<{ pools: pg.Pool[]; close(): Promise<void> }> {
    const name = `ingest_${++made}`;
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ingest_template`);
    await admin.end();
    const pools = Array.from({ length: nodes }, (_, i) => openPgPool(urlOf(name), { max: 8, applicationName: `node-${i}` }));
    return { pools, close: async () => void (await Promise.all(pools.map((p) => p.end()))) };
  }

  async function open(): Promise<IngestHarness> {
    const db = await fresh();
    const pool = db.pools[0]!;
    const runner = createPgIngestRunner(pool);
    return {
      run: (command) => runner.run(command),
      store: pgIngestStore(pool),
      count: async (table) => Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n),
      logged: async (requestId) => {
        const r = (await pool.query<{ count: number; last_at: number | null; agg_key: string | null }>('SELECT count, last_at, agg_key FROM request_log WHERE request_id = $1', [requestId])).rows[0];
        return r && { count: r.count, lastAt: r.last_at, aggKey: r.agg_key };
      },
      close: () => db.close(),
    };
  }

  ingestConformance(open);

  it('two nodes given the same msg_id at once store it once; every answer is the first response', async () => {
    const db = await fresh(2);
    try {
      const [a, b] = db.pools.map((p) => createPgIngestRunner(p));
      for (let round = 0; round < 20; round++) {
        const r = request({ event_type: 'auto_dialog', from_user_id: `race-${round}`, content: `twin ${round}` }, T0 + round);
        const outcomes = await Promise.all([a!.run({ kind: 'auto_dialog', request: r }), b!.run({ kind: 'auto_dialog', request: { ...r, requestId: `${r.requestId}-b` } }), a!.run({ kind: 'auto_dialog', request: { ...r, requestId: `${r.requestId}-a2` } })]);
        const oks = outcomes.map((o) => (o?.kind === 'ok' ? o : assert.fail(JSON.stringify(o))));
        assert.equal(oks.filter((o) => !o.replayed).length, 1, `round ${round}: one stored it`);
        assert.equal(new Set(oks.map((o) => o.body)).size, 1, `round ${round}: one response`);
      }
      const counts = (await db.pools[0]!.query<{ m: string; c: string; i: string }>('SELECT (SELECT count(*) FROM messages) AS m, (SELECT count(*) FROM conversations) AS c, (SELECT count(*) FROM idempotency) AS i')).rows[0]!;
      assert.deepEqual([Number(counts.m), Number(counts.c), Number(counts.i)], [20, 20, 20]);
    } finally {
      await db.close();
    }
  });

  it("two nodes given a new customer's messages at once open one conversation, which counts them all", async () => {
    const db = await fresh(2);
    try {
      const runners = db.pools.map((p) => createPgIngestRunner(p));
      const sends = Array.from({ length: 40 }, (_, i) => runners[i % 2]!.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: `new-${Math.floor(i / 4)}`, content: `line ${i}` }, T0 + i) }));
      const outcomes = await Promise.all(sends);
      assert.ok(outcomes.every((o) => o?.kind === 'ok' && !o.replayed));
      const rows = (await db.pools[1]!.query<{ peer: string; message_count: number; unread: number; n: string }>(
        'SELECT c.peer, c.message_count, c.unread, (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id) AS n FROM conversations c ORDER BY c.peer',
      )).rows;
      assert.equal(rows.length, 10, 'one conversation per customer');
      for (const r of rows) assert.deepEqual([r.message_count, r.unread, Number(r.n)], [4, 4, 4], r.peer);
    } finally {
      await db.close();
    }
  });
});
