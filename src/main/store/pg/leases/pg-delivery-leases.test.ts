import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason } from '../../../../../test/helpers/postgres.ts';
import { createPgWorkQueue, type ClaimedDelivery, type PgWorkQueue } from './pg-leases.ts';
import { pgDeliveryLeases, RECHECK_SQL } from './pg-delivery-leases.ts';
import { seedDeliveries, workNodes } from '../../../../../test/helpers/pg-work-fixture.ts';

const skip = postgresSkipReason();
const T0 = 1_800_000_000_000;
const sent = (now: number) => ({ startedAt: now, durationMs: 3, outcome: { kind: 'sent' as const, status: 200 }, now });

describe('PostgreSQL delivery leases across nodes', { skip, timeout: 120_000 }, () => {
  const nodes = workNodes('deliveries');

  it('three nodes claiming at once: every delivery claimed once, never two of a conversation in flight, each conversation oldest first', async () => {
    const all = await nodes(3);
    const CONVERSATIONS = 40;
    const PER = 15;
    await seedDeliveries(all[0]!.pool, { conversations: CONVERSATIONS, perConversation: PER, dueFrom: T0 - 60_000, dueTo: T0 });
    const claimedBy = new Map<number, string>();
    /** Per conversation, the delivery claimed and whose completion has not been asked for yet. */
    const inFlight = new Map<string, number>();
    const order = new Map<string, number[]>();
    let claims = 0;
    let overlaps = 0;

    const run = async (name: string, q: PgWorkQueue): Promise<void> => {
      for (let idle = 0; idle < 3; ) {
        const got = await q.claimDeliveries(name, T0, 8, 60_000);
        claims++;
        if (got.length === 0) {
          idle++;
          // Another node's completions free the next of their conversations: let them land.
          await new Promise((r) => setImmediate(r));
          continue;
        }
        idle = 0;
        for (const d of got) {
          assert.equal(claimedBy.get(d.id), undefined, `delivery ${d.id} claimed by ${claimedBy.get(d.id)} and again by ${name}`);
          claimedBy.set(d.id, name);
          if (inFlight.has(d.conversationId)) overlaps++;
          inFlight.set(d.conversationId, d.id);
          assert.equal(d.lease.holder, name);
          assert.equal(d.lease.until, T0 + 60_000);
        }
        // "Sending": the others claim meanwhile.
        await Promise.all(
          got.map(async (d: ClaimedDelivery) => {
            await new Promise((r) => setImmediate(r));
            // Marked before the completion is sent: a claim of the next one cannot be answered earlier.
            inFlight.delete(d.conversationId);
            order.set(d.conversationId, [...(order.get(d.conversationId) ?? []), d.id]);
            assert.equal(await q.completeDelivery(d.id, d.lease, sent(T0)), true);
          }),
        );
      }
    };
    await Promise.all(all.map((n, i) => run(`node-${i}`, n.q)));

    assert.equal(overlaps, 0, 'two deliveries of one conversation in flight at once');
    assert.equal(claimedBy.size, CONVERSATIONS * PER, 'every delivery claimed');
    const perNode = [0, 1, 2].map((i) => [...claimedBy.values()].filter((n) => n === `node-${i}`).length);
    assert.ok(perNode.every((n) => n > 0), `every node took a share: ${perNode}`);
    const db = all[0]!.pool;
    const ids = await db.query<{ conversation_id: string; ids: string[] }>('SELECT conversation_id, array_agg(id ORDER BY id) AS ids FROM deliveries GROUP BY 1');
    for (const r of ids.rows) assert.deepEqual(order.get(r.conversation_id), r.ids.map(Number), `order of ${r.conversation_id}`);
    const left = await db.query("SELECT state, count(*)::int AS n, max(lease_count) AS claims, count(lease_holder)::int AS leased FROM deliveries GROUP BY state");
    assert.deepEqual(left.rows, [{ state: 'sent', n: CONVERSATIONS * PER, claims: 1, leased: 0 }]);
    const attempts = await db.query('SELECT count(*)::int AS n, count(DISTINCT delivery_id)::int AS d FROM delivery_attempts');
    assert.deepEqual(attempts.rows[0], { n: CONVERSATIONS * PER, d: CONVERSATIONS * PER });
    console.log(`# 3 nodes: ${claimedBy.size} deliveries in ${claims} claims, shares ${perNode.join('/')}`);
  });

  it('two nodes through retries, deaths and abandoned claims: one unexpired lease per conversation at a time, sends in order, every delivery settled', async () => {
    const nodesOf = await nodes(2);
    await seedDeliveries(nodesOf[0]!.pool, { conversations: 30, perConversation: 8, dueFrom: T0 - 5_000, dueTo: T0 });
    const LEASE = 3_000;
    let now = T0;
    // A fixed sequence (a linear congruential generator), so a failure replays the same way.
    let seed = 42;
    const random = (): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    /** Per conversation, the claims that may still complete: their lease's end, until their completion is asked for. */
    const live = new Map<string, Map<number, number>>();
    const sentOrder = new Map<string, number[]>();
    let applied = 0;
    let abandoned = 0;
    /** Claims whose node stalled: once another claim took the row, their late completion must change nothing. */
    const stalled: Array<{ d: ClaimedDelivery; q: PgWorkQueue }> = [];
    let refused = 0;
    const run = async (name: string, q: PgWorkQueue): Promise<void> => {
      for (;;) {
        const got = await q.claimDeliveries(name, now, 5, LEASE);
        if (got.length === 0) return;
        await Promise.all(
          got.map(async (d) => {
            const mine = live.get(d.conversationId) ?? new Map<number, number>();
            for (const [other, until] of mine) assert.ok(until <= now, `${d.conversationId}: ${d.id} claimed while ${other} holds an unexpired lease`);
            live.set(d.conversationId, new Map([[d.id, d.lease.until]]));
            await new Promise((r) => setImmediate(r));
            const roll = random();
            if (roll < 0.1) return void (abandoned++, stalled.push({ d, q })); // the node stalls with it: its lease runs out
            live.get(d.conversationId)!.delete(d.id);
            const outcome =
              roll < 0.75 ? { kind: 'sent' as const, status: 200 } : roll < 0.93 ? { kind: 'retry' as const, at: now + 1_000, status: 503, error: 'HTTP 503' } : { kind: 'dead' as const, status: 400, error: 'HTTP 400' };
            if (outcome.kind === 'sent') sentOrder.set(d.conversationId, [...(sentOrder.get(d.conversationId) ?? []), d.id]);
            assert.equal(await q.completeDelivery(d.id, d.lease, { startedAt: now, durationMs: 1, outcome, now }), true);
            applied++;
          }),
        );
      }
    };
    const db = nodesOf[0]!.pool;
    for (let phase = 0; phase < 200; phase++) {
      await Promise.all(nodesOf.map((n, i) => run(`node-${i}`, n.q)));
      const pending = (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM deliveries WHERE state = 'pending'")).rows[0]!.n;
      for (const [i, { d, q }] of [...stalled.entries()].reverse()) {
        const count = (await db.query<{ n: number }>('SELECT lease_count AS n FROM deliveries WHERE id = $1', [d.id])).rows[0]!.n;
        if (count === d.lease.count) continue; // nobody took it yet: it is still the stalled node's
        const late = { startedAt: now, durationMs: 1, outcome: { kind: 'dead' as const, status: 500, error: 'late' }, now };
        assert.equal(await q.completeDelivery(d.id, d.lease, late), false, `the stalled claim ${d.lease.count} of ${d.id} completed after claim ${count}`);
        stalled.splice(i, 1);
        refused++;
      }
      if (pending === 0) break;
      now += 1_000; // retries fall due; abandoned leases run out after three of these
    }
    const states = (await db.query<{ state: string; n: number }>('SELECT state, count(*)::int AS n FROM deliveries GROUP BY state ORDER BY state')).rows;
    assert.deepEqual(states.map((r) => r.state).filter((st) => st !== 'sent' && st !== 'dead'), [], 'every delivery settled');
    for (const [conversation, ids] of sentOrder) assert.deepEqual(ids, [...ids].sort((x, y) => x - y), `${conversation} sent in order`);
    const recorded = (await db.query<{ n: number; reclaimed: number }>('SELECT (SELECT count(*)::int FROM delivery_attempts) AS n, (SELECT count(*)::int FROM deliveries WHERE lease_count > attempts) AS reclaimed')).rows[0]!;
    assert.equal(recorded.n, applied, 'one attempt row per completion applied');
    assert.ok(abandoned > 0 && recorded.reclaimed > 0 && refused === abandoned, `abandoned claims were taken over and their late completions refused (${abandoned} abandoned, ${refused} refused)`);
    console.log(`# two nodes, retries and stalls: ${applied} attempts recorded, ${abandoned} claims abandoned, taken over and their late completions refused, ${(now - T0) / 1000} s of clock; ${states.map((r) => `${r.state} ${r.n}`).join(', ')}`);
  });

  it('a node that stops renewing loses its lease when it runs out; another carries on and the first one’s late completion is refused', async () => {
    const [a, b] = await nodes(2);
    await seedDeliveries(a!.pool, { conversations: 1, perConversation: 2, dueFrom: T0, dueTo: T0 });
    const [first] = await a!.q.claimDeliveries('a', T0, 10, 30_000);
    assert.ok(first);
    assert.equal((await a!.q.claimDeliveries('a', T0, 10, 30_000)).length, 0, 'the second waits for the first');

    // Renewed at +20 s, the lease holds past its first expiry.
    const renewed = await a!.q.renewLeases('a', [first], T0 + 20_000, 30_000);
    assert.deepEqual([...renewed], [[first.id, T0 + 50_000]]);
    const lease = { ...first.lease, until: T0 + 50_000 };
    assert.deepEqual(await b!.q.claimDeliveries('b', T0 + 49_999, 10, 30_000), [], 'held until its expiry');

    // Node a stops (no renewal): at its expiry b takes the same delivery over, not the next one.
    const [taken, ...more] = await b!.q.claimDeliveries('b', T0 + 50_000, 10, 30_000);
    assert.deepEqual(more, []);
    assert.equal(taken!.id, first.id);
    assert.deepEqual(taken!.lease, { holder: 'b', count: 2, until: T0 + 80_000 });

    // a wakes up: its renewal and its completion are refused, b's result stands.
    assert.deepEqual([...(await a!.q.renewLeases('a', [{ id: first.id, lease }], T0 + 50_001, 30_000))], []);
    assert.equal(await a!.q.completeDelivery(first.id, lease, { ...sent(T0 + 50_001), outcome: { kind: 'dead', status: 500, error: 'late' } }), false);
    assert.equal(await a!.q.releaseDelivery(first.id, lease), false);
    assert.equal(await b!.q.completeDelivery(first.id, taken!.lease, sent(T0 + 50_002)), true);
    const row = (await a!.pool.query('SELECT state, attempts, last_error, lease_count FROM deliveries WHERE id = $1', [first.id])).rows[0];
    assert.deepEqual(row, { state: 'sent', attempts: 1, last_error: null, lease_count: 2 });
    // Even a node claiming the same row anew is a new claim: its old lease is not the row's.
    const [second] = await a!.q.claimDeliveries('a', T0 + 50_003, 10, 30_000);
    assert.ok(second && second.id !== first.id, 'the conversation carries on with its next delivery');
    const [again] = await b!.q.claimDeliveries('a', T0 + 80_003, 10, 30_000);
    assert.equal(again!.id, second.id);
    assert.equal(await a!.q.completeDelivery(second.id, second.lease, sent(T0 + 80_004)), false, 'the same node, an older claim');
    assert.equal(await a!.q.completeDelivery(second.id, again!.lease, sent(T0 + 80_004)), true);
  });

  it('retries at their time, dies, and keeps the conversation’s order; a cancelled delivery’s completion is refused; a released one goes again at once', async () => {
    const [a] = await nodes(1);
    const q = a!.q;
    await seedDeliveries(a!.pool, { conversations: 2, perConversation: 2, dueFrom: T0, dueTo: T0 });
    const firsts = await q.claimDeliveries('a', T0, 10, 60_000);
    assert.equal(firsts.length, 2, 'one per conversation');
    const [x, y] = firsts;
    assert.equal(await q.completeDelivery(x!.id, x!.lease, { startedAt: T0, durationMs: 9, outcome: { kind: 'retry', at: T0 + 5_000, status: 503, error: 'HTTP 503' }, now: T0 + 9 }), true);
    assert.equal(await q.releaseDelivery(y!.id, y!.lease), true);
    const back = await q.claimDeliveries('a', T0 + 10, 10, 60_000);
    assert.deepEqual(back.map((d) => d.id), [y!.id], 'x waits for its retry, and holds its conversation’s next one back');
    const xRow = (await a!.pool.query('SELECT state, attempts, round_attempts, next_attempt_at, last_status, last_error FROM deliveries WHERE id = $1', [x!.id])).rows[0];
    assert.deepEqual(xRow, { state: 'pending', attempts: 1, round_attempts: 1, next_attempt_at: String(T0 + 5_000), last_status: 503, last_error: 'HTTP 503' });
    const [xAgain] = await q.claimDeliveries('a', T0 + 5_000, 10, 60_000);
    assert.equal(xAgain!.id, x!.id);
    assert.equal(await q.completeDelivery(x!.id, xAgain!.lease, { startedAt: T0 + 5_000, durationMs: 1, outcome: { kind: 'dead', status: 400, error: 'HTTP 400' }, now: T0 + 5_001 }), true);
    const attempts = (await a!.pool.query('SELECT attempt, outcome, status FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt', [x!.id])).rows;
    assert.deepEqual(attempts, [{ attempt: 1, outcome: 'retry', status: 503 }, { attempt: 2, outcome: 'dead', status: 400 }]);

    // The operator cancels y while it is out: its holder's record changes nothing.
    await a!.pool.query("UPDATE deliveries SET state = 'cancelled' WHERE id = $1", [y!.id]);
    assert.equal(await q.completeDelivery(y!.id, back[0]!.lease, sent(T0 + 5_002)), false);
    assert.equal((await a!.pool.query('SELECT state FROM deliveries WHERE id = $1', [y!.id])).rows[0].state, 'cancelled');
  });

  it('a delivery back to pending (a dead one retried) does not go beside a newer one of its conversation in flight', async () => {
    const [a, b] = await nodes(2);
    await seedDeliveries(a!.pool, { conversations: 1, perConversation: 2, dueFrom: T0, dueTo: T0 });
    const [d1] = await a!.q.claimDeliveries('a', T0, 10, 60_000);
    await a!.q.completeDelivery(d1!.id, d1!.lease, { ...sent(T0), outcome: { kind: 'dead', status: 400, error: 'HTTP 400' } });
    const [d2] = await a!.q.claimDeliveries('a', T0 + 1, 10, 60_000);
    assert.ok(d2 && d2.id > d1!.id);
    // The console's Retry of the dead one, while d2 is on its way.
    await a!.pool.query("UPDATE deliveries SET state = 'pending', round_attempts = 0, next_attempt_at = $2 WHERE id = $1", [d1!.id, T0 + 2]);
    assert.deepEqual(await b!.q.claimDeliveries('b', T0 + 3, 10, 60_000), [], 'd2 is in flight');
    await a!.q.completeDelivery(d2.id, d2.lease, sent(T0 + 4));
    assert.deepEqual((await b!.q.claimDeliveries('b', T0 + 5, 10, 60_000)).map((d) => d.id), [d1!.id]);
  });

  it('a dead delivery retried while another node’s claim of a newer one is committing: never both in flight', async () => {
    const [a, b] = await nodes(2);
    await seedDeliveries(a!.pool, { conversations: 1, perConversation: 2, dueFrom: T0, dueTo: T0 });
    const [d1] = await a!.q.claimDeliveries('a', T0, 10, 60_000);
    await a!.q.completeDelivery(d1!.id, d1!.lease, { ...sent(T0), outcome: { kind: 'dead', status: 400, error: 'HTTP 400' } });
    // Node "slow"'s claim statement pauses after it picked d2 (its snapshot saw d1 dead) and before it commits.
    await a!.pool.query(`
      CREATE FUNCTION pause_slow_claim() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.lease_holder = 'slow' AND OLD.lease_holder IS DISTINCT FROM 'slow' THEN PERFORM pg_sleep(0.5); END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER pause_slow_claim BEFORE UPDATE ON deliveries FOR EACH ROW EXECUTE FUNCTION pause_slow_claim();`);
    const slow = a!.q.claimDeliveries('slow', T0 + 1, 10, 60_000);
    for (let i = 0; ; i++) {
      const waiting = await b!.pool.query("SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'");
      if (waiting.rowCount) break;
      assert.ok(i < 500, 'the slow claim never paused');
      await new Promise((r) => setTimeout(r, 2));
    }
    // Meanwhile the console retries d1, and node b claims: it cannot see the slow node's claim yet.
    await b!.pool.query("UPDATE deliveries SET state = 'pending', round_attempts = 0, next_attempt_at = $2 WHERE id = $1", [d1!.id, T0 + 2]);
    const fast = await b!.q.claimDeliveries('b', T0 + 3, 10, 60_000);
    const slowGot = await slow;
    const claimed = [...fast, ...slowGot].map((d) => d.id);
    assert.ok(claimed.length <= 1, `one of the conversation at most, got ${claimed.join(', ')}`);
    const leased = (await a!.pool.query<{ id: string }>("SELECT id FROM deliveries WHERE state = 'pending' AND lease_until > $1", [T0 + 3])).rows.map((r) => Number(r.id));
    assert.deepEqual(leased, claimed, 'what the claims returned is what is leased');
    // Whatever lost the race goes in order afterwards: d1 first, then d2.
    for (const d of [...fast, ...slowGot]) await a!.q.releaseDelivery(d.id, d.lease);
    const [next] = await b!.q.claimDeliveries('b', T0 + 4, 10, 60_000);
    assert.equal(next!.id, d1!.id);
  });

  it('claims the earliest due first, whatever the ids', async () => {
    const [a] = await nodes(1);
    await seedDeliveries(a!.pool, { conversations: 30, perConversation: 1, dueFrom: T0 - 60_000, dueTo: T0 });
    const expected = (await a!.pool.query<{ id: string }>('SELECT id FROM deliveries ORDER BY next_attempt_at, id LIMIT 5')).rows.map((r) => Number(r.id));
    assert.notDeepEqual(expected, [...expected].sort((x, y) => x - y), 'the seed scrambles due times against ids');
    assert.deepEqual((await a!.q.claimDeliveries('a', T0, 5, 60_000)).map((d) => d.id), expected);
  });

  it('claims one lane (client and origin) when asked', async () => {
    const [a] = await nodes(1);
    await seedDeliveries(a!.pool, { conversations: 3, perConversation: 1, dueFrom: T0, dueTo: T0, prefix: 'v', origin: 'https://one:443' });
    await seedDeliveries(a!.pool, { conversations: 3, perConversation: 1, dueFrom: T0, dueTo: T0, prefix: 'w', origin: 'https://two:443' });
    const got = await a!.q.claimDeliveries('a', T0, 10, 60_000, { clientId: 'c1', origin: 'https://two:443' });
    assert.deepEqual(got.map((d) => d.conversationId).sort(), ['w1', 'w2', 'w3']);
    assert.deepEqual(await a!.q.claimDeliveries('a', T0, 10, 60_000, { clientId: 'c2', origin: 'https://one:443' }), []);
  });

  it('a claimer holding its transaction open does not stall another: locked rows are skipped, not waited for', async () => {
    const [a, b] = await nodes(2);
    await seedDeliveries(a!.pool, { conversations: 4, perConversation: 2, dueFrom: T0, dueTo: T0 });
    const held = await a!.pool.connect();
    try {
      await held.query('BEGIN');
      const mine = await createPgWorkQueue(held).claimDeliveries('a', T0, 2, 60_000);
      assert.equal(mine.length, 2);
      // b's statement times out after 5 s (statement_timeout) if it waits on a's locks.
      const started = performance.now();
      const theirs = await b!.q.claimDeliveries('b', T0, 10, 60_000);
      const ms = performance.now() - started;
      const mineConversations = new Set(mine.map((d) => d.conversationId));
      assert.equal(theirs.length, 2, 'the two conversations a has not touched');
      assert.ok(theirs.every((d) => !mineConversations.has(d.conversationId)), 'not the locked rows, nor the next ones of their conversations');
      assert.ok(ms < 1000, `the second claim took ${ms.toFixed(0)} ms`);
      await held.query('COMMIT');
    } finally {
      held.release();
    }
  });

  it('claims read the indexes: the due walk and one seek per candidate’s conversation, never the whole table', async () => {
    const [a] = await nodes(1);
    await seedDeliveries(a!.pool, { conversations: 1000, perConversation: 10, dueFrom: T0 - 3_600_000, dueTo: T0 + 3_600_000 });
    await a!.pool.query("UPDATE deliveries SET state = 'sent' WHERE id % 3 = 0");
    await a!.pool.query('ANALYZE deliveries');
    const { CLAIM_DELIVERIES_SQL, CLAIM_LANE_SQL } = await import('./pg-delivery-leases.ts');
    const plan = async (sql: string, args: unknown[]) => JSON.stringify((await a!.pool.query(`EXPLAIN (FORMAT JSON) ${sql}`, args)).rows[0]);
    const all = await plan(CLAIM_DELIVERIES_SQL, [T0, 32, 'a', 60_000]);
    const lane = await plan(CLAIM_LANE_SQL, [T0, 32, 'a', 60_000, 'c1', 'http://receiver:80']);
    for (const [name, p] of [['all', all], ['lane', lane]] as const) {
      assert.ok(!p.includes('"Node Type":"Seq Scan"'), `${name}: no sequential scan: ${p}`);
      assert.ok(p.includes('"Index Name":"deliveries_pending"'), `${name}: the conversation check seeks deliveries_pending: ${p}`);
    }
    assert.ok(all.includes('"Index Name":"deliveries_due"'), `the due walk reads deliveries_due: ${all}`);
    assert.ok(lane.includes('"Index Name":"deliveries_lane"'), `a lane's walk reads deliveries_lane: ${lane}`);
    for (const p of [all, lane]) assert.ok(p.includes('"Index Name":"deliveries_pkey"'), `the picked rows are updated by key: ${p}`);
    const started = performance.now();
    const got = await createPgWorkQueue(a!.pool).claimDeliveries('a', T0, 32, 60_000);
    const claimMs = performance.now() - started;
    // The look after the claim: one seek per claimed row.
    const { RECHECK_SQL } = await import('./pg-delivery-leases.ts');
    const ids = got.map((d) => d.id);
    const recheck = JSON.stringify((await a!.pool.query(`EXPLAIN (FORMAT JSON) ${RECHECK_SQL}`, [ids])).rows[0]);
    assert.ok(!recheck.includes('"Node Type":"Seq Scan"'), `the look after a claim: no sequential scan: ${recheck}`);
    assert.ok(recheck.includes('"Index Name":"deliveries_pending"') && recheck.includes('"Index Name":"deliveries_pkey"'), `the claimed rows by key, one seek each into deliveries_pending: ${recheck}`);
    const looked = performance.now();
    assert.deepEqual((await a!.pool.query(RECHECK_SQL, [ids])).rows, [], 'nothing to give back');
    const lookMs = performance.now() - looked;
    console.log(`# claim of ${got.length} among ~6,700 pending deliveries in 1,000 conversations: ${claimMs.toFixed(1)} ms, of which the look after it ${lookMs.toFixed(1)} ms (measured again alone)`);
  });

  it('gives back every row it claimed when the look after the claim fails, so another node takes them at once', async () => {
    const [a] = await nodes(1);
    await seedDeliveries(a!.pool, { conversations: 3, perConversation: 1, dueFrom: T0, dueTo: T0 });
    let fail = true;
    const flaky = {
      query: (text: string, values?: unknown[]) => {
        if (fail && text === RECHECK_SQL) {
          fail = false;
          return Promise.reject(new Error('Connection terminated unexpectedly'));
        }
        return a!.pool.query(text, values);
      },
    } as Parameters<typeof pgDeliveryLeases>[0];
    await assert.rejects(pgDeliveryLeases(flaky).claimDeliveries('n1', T0, 10, 60_000), /Connection terminated/);
    const leased = (await a!.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM deliveries WHERE lease_holder IS NOT NULL')).rows[0]!.n;
    assert.equal(leased, 0, 'no row left leased to a node that does not know it holds it');
    assert.equal((await a!.q.claimDeliveries('n2', T0, 10, 60_000)).length, 3);
  });
});
