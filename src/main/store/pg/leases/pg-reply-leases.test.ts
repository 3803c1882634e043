import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { postgresSkipReason } from '../../../../../test/helpers/postgres.ts';
import { createPgWorkQueue, type PgWorkQueue } from './pg-leases.ts';
import { CLAIM_REPLIES_SQL } from './pg-reply-leases.ts';
import { workNodes } from '../../../../../test/helpers/pg-work-fixture.ts';

const skip = postgresSkipReason();
const T0 = 1_800_000_000_000;

describe('PostgreSQL quiet-period reply timers across nodes', { skip, timeout: 120_000 }, () => {
  const fresh = workNodes('replies');

  /** A fresh database with `conversations` conversations (v1 …), and `n` nodes, each with its own pool. */
  async function nodes(n: number, conversations = 3) {
    const all = await fresh(n);
    await all[0]!.pool.query("INSERT INTO clients (id, created_at, updated_at) VALUES ('c1', 1, 1)");
    await all[0]!.pool.query(
      "INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at) SELECT 'v' || i, 'c1', 'im', 'p' || i, 1, 1 FROM generate_series(1, $1::int) i",
      [conversations],
    );
    return all;
  }

  const row = async (pool: pg.Pool, id: string) =>
    (await pool.query('SELECT due_at::float8 AS due, last_message_id::float8 AS last, lease_holder AS holder FROM due_replies WHERE conversation_id = $1', [id])).rows[0];

  it('a newer message moves the timer and its message; one that reaches a node late moves nothing', async () => {
    const [a, b] = await nodes(2);
    assert.equal(await a!.q.scheduleReply('v1', T0 + 2_000, 10), true);
    assert.equal(await b!.q.scheduleReply('v1', T0 + 3_000, 12), true);
    assert.equal(await a!.q.scheduleReply('v1', T0 + 2_500, 11), false, 'message 11 arrived after 12 had moved the timer');
    assert.deepEqual(await row(a!.pool, 'v1'), { due: T0 + 3_000, last: 12, holder: null });
    assert.deepEqual(await a!.q.claimDueReplies('a', T0 + 2_999, 10, 60_000), [], 'not due yet');
    const [got] = await a!.q.claimDueReplies('a', T0 + 3_000, 10, 60_000);
    assert.deepEqual(got, { conversationId: 'v1', dueAt: T0 + 3_000, lastMessageId: 12, lease: { holder: 'a', count: 1, until: T0 + 63_000 } });
  });

  it('drops the answer when a newer customer message reached another node meanwhile; the timer fires again at the newer time', async () => {
    const [a, b] = await nodes(2);
    await a!.q.scheduleReply('v1', T0, 10);
    const [claim] = await a!.q.claimDueReplies('a', T0, 10, 60_000);
    // While a's engine works, the customer writes again, through node b.
    assert.equal(await b!.q.scheduleReply('v1', T0 + 2_000, 11), true);
    assert.equal(await a!.q.finishReply('v1', claim!.lease, 10), 'stale');
    assert.deepEqual(await row(a!.pool, 'v1'), { due: T0 + 2_000, last: 11, holder: null }, 'the timer stays, released');
    assert.deepEqual(await b!.q.claimDueReplies('b', T0 + 1_999, 10, 60_000), []);
    const [next] = await b!.q.claimDueReplies('b', T0 + 2_000, 10, 60_000);
    assert.equal(next!.lastMessageId, 11);
    assert.equal(await b!.q.finishReply('v1', next!.lease, 11), 'done');
    assert.equal(await row(a!.pool, 'v1'), undefined, 'answered: no timer left');
    // The next message starts a timer afresh.
    assert.equal(await a!.q.scheduleReply('v1', T0 + 9_000, 12), true);
  });

  it('a node that stops renewing loses its timers when the lease runs out; another fires them, and the first one’s answer is refused', async () => {
    const [a, b] = await nodes(2);
    await a!.q.scheduleReply('v1', T0, 10);
    const [mine] = await a!.q.claimDueReplies('a', T0, 10, 30_000);
    const renewed = await a!.q.renewReplyLeases('a', [mine!], T0 + 10_000, 30_000);
    assert.deepEqual([...renewed], [['v1', T0 + 40_000]]);
    assert.deepEqual(await b!.q.claimDueReplies('b', T0 + 39_999, 10, 30_000), [], 'held while renewed');
    const [theirs] = await b!.q.claimDueReplies('b', T0 + 40_000, 10, 30_000);
    assert.deepEqual(theirs!.lease, { holder: 'b', count: 2, until: T0 + 70_000 });
    assert.deepEqual([...(await a!.q.renewReplyLeases('a', [mine!], T0 + 40_001, 30_000))], []);
    assert.equal(await a!.q.finishReply('v1', mine!.lease, 10), 'lost');
    assert.equal(await a!.q.deferReply('v1', mine!.lease, T0 + 99_000), false);
    assert.deepEqual(await row(a!.pool, 'v1'), { due: T0, last: 10, holder: 'b' }, 'the late holder changed nothing');
    assert.equal(await b!.q.finishReply('v1', theirs!.lease, 10), 'done');
    assert.equal(await a!.q.finishReply('v1', mine!.lease, 10), 'lost', 'answered by b: still not a');
  });

  it('a node that claims a timer again after its own lease ran out answers with the new claim only', async () => {
    const [a] = await nodes(1);
    await a!.q.scheduleReply('v1', T0, 10);
    const [old] = await a!.q.claimDueReplies('a', T0, 10, 30_000);
    const [fresh] = await a!.q.claimDueReplies('a', T0 + 30_000, 10, 30_000);
    assert.equal(fresh!.lease.count, old!.lease.count + 1);
    assert.equal(await a!.q.finishReply('v1', old!.lease, 10), 'lost', 'the stalled first attempt');
    assert.equal(await a!.q.finishReply('v1', fresh!.lease, 10), 'done');
  });

  it('a deferred timer (the per-minute cap) fires again at its time, on any node', async () => {
    const [a, b] = await nodes(2);
    await a!.q.scheduleReply('v1', T0, 10);
    const [claim] = await a!.q.claimDueReplies('a', T0, 10, 60_000);
    assert.equal(await a!.q.deferReply('v1', claim!.lease, T0 + 30_000), true);
    assert.deepEqual(await b!.q.claimDueReplies('b', T0 + 29_999, 10, 60_000), []);
    assert.equal((await b!.q.claimDueReplies('b', T0 + 30_000, 10, 60_000)).length, 1);
  });

  it('two nodes claiming at once take each due timer once, earliest first, while one holding its transaction open stalls nobody', async () => {
    const [a, b] = await nodes(2, 200);
    for (let i = 1; i <= 200; i++) await a!.q.scheduleReply(`v${i}`, T0 - i, i);
    const held = await a!.pool.connect();
    const seen = new Map<string, string>();
    try {
      await held.query('BEGIN');
      const locked = await createPgWorkQueue(held).claimDueReplies('a', T0, 20, 60_000);
      assert.deepEqual(locked.map((r) => r.conversationId), Array.from({ length: 20 }, (_, i) => `v${200 - i}`), 'earliest due first');
      for (const r of locked) seen.set(r.conversationId, 'held');
      const started = performance.now();
      const run = async (name: string, q: PgWorkQueue) => {
        for (;;) {
          const got = await q.claimDueReplies(name, T0, 7, 60_000);
          if (got.length === 0) return;
          for (const r of got) {
            assert.equal(seen.get(r.conversationId), undefined, `${r.conversationId} claimed twice`);
            seen.set(r.conversationId, name);
          }
          await Promise.all(got.map((r) => q.finishReply(r.conversationId, r.lease, r.lastMessageId).then((x) => assert.equal(x, 'done'))));
        }
      };
      await Promise.all([run('a', a!.q), run('b', b!.q)]);
      const ms = performance.now() - started;
      assert.equal(seen.size, 200);
      assert.ok(ms < 3000, `the others were claimed around the held ones in ${ms.toFixed(0)} ms`);
      const shares = ['held', 'a', 'b'].map((n) => [...seen.values()].filter((v) => v === n).length);
      assert.ok(shares[1]! > 0 && shares[2]! > 0, `both nodes took a share: ${shares}`);
      await held.query('COMMIT');
    } finally {
      held.release();
    }
    const left = await a!.pool.query<{ n: number; leased: number }>('SELECT count(*)::int AS n, count(lease_holder)::int AS leased FROM due_replies');
    assert.deepEqual(left.rows[0], { n: 20, leased: 20 }, 'only the held transaction’s claims are left, leased');
  });

  it('claims read the due index and update the picked timers by key', async () => {
    const [a] = await nodes(1, 20_000);
    await a!.pool.query('INSERT INTO due_replies (conversation_id, due_at, last_message_id) SELECT id, $1::bigint + (hashtext(id) % 100000), 1 FROM conversations', [T0]);
    await a!.pool.query('ANALYZE due_replies');
    const plan = JSON.stringify((await a!.pool.query(`EXPLAIN (FORMAT JSON) ${CLAIM_REPLIES_SQL}`, [T0, 32, 'a', 60_000])).rows[0]);
    assert.ok(!plan.includes('"Node Type":"Seq Scan"'), `no sequential scan: ${plan}`);
    assert.ok(plan.includes('"Index Name":"due_replies_due"'), `the due walk reads due_replies_due: ${plan}`);
    assert.ok(plan.includes('"Index Name":"due_replies_pkey"'), `the picked rows are updated by key: ${plan}`);
  });
});
