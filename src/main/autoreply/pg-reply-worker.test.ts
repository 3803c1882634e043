import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from '../../../test/helpers/postgres.ts';
import { createTemplate, copyDatabase, losingFirstAnswer } from '../../../test/helpers/pg-work-fixture.ts';
import { CLAIM_REPLIES_SQL } from '../store/pg/leases/pg-reply-leases.ts';
import { driveClock } from '../../../test/helpers/drive-clock.ts';
import { scriptedEngine } from '../../../test/helpers/engines.ts';
import { manualClock, type ManualClock } from '../../shared/clock.ts';
import { clientSettingsSchema, type ClientSettings } from '../../shared/client-settings.ts';
import type { MessageInfo } from '../../shared/protocol/message-schema.ts';
import type { Engine } from '../engines/engine.ts';
import { openPgPool } from '../store/pg/pool.ts';
import { pgReplyStore } from '../store/pg/reply-queries.ts';
import { createPgIngestRunner } from '../conversations/pg-ingest-runner.ts';
import { CLIENT, request, T0 } from '../store/conformance/ingest-conformance.ts';
import { createPgReplyWorker, type PgReplyWorker } from './pg-reply-worker.ts';
import type { FireResult } from './pg-reply-fire.ts';

const skip = postgresSkipReason();
const SETTINGS: Partial<ClientSettings> = { quietSeconds: 2, quietMaxSeconds: 10, sendUrl: 'http://receiver.example/hook', fallbackText: 'A human will answer.' };
const settings = clientSettingsSchema.parse({ boundAccount: 'shop-bot', pauseMinutes: 10, ...SETTINGS });

/** Fire results as they come, and promises of those to come. */
function results() {
  const seen: Array<{ conversationId: string; result: FireResult; node: string }> = [];
  let waiters: Array<() => void> = [];
  return {
    seen,
    push(e: { conversationId: string; result: FireResult; node: string }): void {
      seen.push(e);
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    },
    /** Resolves once `test` holds of what was seen. */
    async until(test: (seen: typeof this.seen) => boolean): Promise<void> {
      while (!test(seen)) await new Promise<void>((r) => waiters.push(r));
    },
  };
}

describe('auto replies across PostgreSQL nodes', { skip, timeout: 120_000 }, () => {
  let server: PgServer;
  let made = 0;
  const pools: pg.Pool[] = [];
  const workers: PgReplyWorker[] = [];
  /** Every scripted engine a test made: released after it, so a failed test's held call does not hold up stopping its worker. */
  const scripts: Array<ReturnType<typeof scriptedEngine>> = [];
  const scripted = (): ReturnType<typeof scriptedEngine> => {
    const s = scriptedEngine();
    scripts.push(s);
    return s;
  };
  before(async () => {
    server = await startPostgres();
    await createTemplate(server.url, 'worker_template');
  });
  afterEach(async () => {
    for (const s of scripts.splice(0)) s.release();
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    await Promise.all(pools.splice(0).map((p) => p.end()));
  });
  after(() => server?.stop());

  /** A fresh database with the client, and `n` nodes on it, each its own pool. */
  async function fresh(n: number) {
    const url = await copyDatabase(server.url, 'worker_template', `worker_${++made}`);
    const nodePools = Array.from({ length: n }, (_, i) => openPgPool(url, { max: 6, applicationName: `node-${i}`, onIdleError: () => {} }));
    pools.push(...nodePools);
    await nodePools[0]!.query('INSERT INTO clients (id, created_at, updated_at) VALUES ($1, $2, $2)', [CLIENT, T0]);
    const events = results();
    const alerts: string[] = [];
    const worker = (i: number, nodeId: string, clock: ManualClock, engine: Engine, options: { leaseMs?: number; concurrency?: number; pollMs?: number; knows?: () => boolean } = {}) => {
      const { knows = () => true, ...workerOptions } = options;
      const w = createPgReplyWorker({
        pool: nodePools[i]!,
        engine,
        clock,
        nodeId,
        lookupClient: (id) => (id === CLIENT && knows() ? { id, enabled: true, settings, keys: [] } : undefined),
        engineTimeoutMs: 3_600_000,
        contextLines: 20,
        pollMs: 1_000,
        ...workerOptions,
        onDelivery: () => {},
        onAlert: (conversationId, reason) => alerts.push(`${conversationId}:${reason}`),
        onFired: (conversationId, result) => events.push({ conversationId, result, node: nodeId }),
        log: () => {},
      });
      workers.push(w);
      return w;
    };
    const runner = createPgIngestRunner(nodePools[0]!);
    const say = async (info: Partial<MessageInfo>, at: number) => {
      const o = await runner.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'u1', ...info }, at, SETTINGS) });
      assert.ok(o?.kind === 'ok' && o.replyScheduled, JSON.stringify(o));
      return o;
    };
    const q = async <R>(sql: string, values: unknown[] = []): Promise<R[]> => (await nodePools[0]!.query(sql, values)).rows as R[];
    return { pools: nodePools, events, alerts, worker, say, q };
  }

  it('node A stores the messages; node B answers them together once the quiet period has passed, its delivery pending', async () => {
    const { events, worker, say, q } = await fresh(2);
    const clock = manualClock(T0);
    const script = scripted();
    const m1 = await say({ content: 'Where is my order?' }, T0);
    const m2 = await say({ content: 'It is #123.' }, T0 + 1_000);
    // Polling seldom: it wakes at the due time it read at its first look.
    worker(1, 'b', clock, script.engine, { pollMs: 30_000 }).start();
    // Its first look set two timers: the wake-up at the due time, and the lease renewal's.
    while (clock.pending() < 2) await new Promise((r) => setTimeout(r, 5));
    clock.advance(2_999);
    assert.equal(clock.pending(), 2, 'nothing woke before the quiet period after the last message ended (due at +3000)');
    clock.advance(1);
    assert.equal(clock.pending(), 1, 'the wake-up at the due time');
    await events.until((s) => s.length > 0);
    assert.deepEqual(events.seen, [{ conversationId: m1.conversationId, result: 'answered', node: 'b' }]);
    assert.equal((await q<{ created_at: number }>('SELECT created_at FROM replies'))[0]!.created_at, T0 + 3_000, 'answered at the due time');
    assert.deepEqual(script.calls.map((c) => c.context.map((l) => l.content)), [['Where is my order?', 'It is #123.']]);
    const replies = await q<{ msg_id: string; reply_to: string; content: string }>('SELECT msg_id, reply_to, content FROM replies');
    assert.equal(replies.length, 1);
    assert.deepEqual(JSON.parse(replies[0]!.reply_to), [m1.msgId, m2.msgId]);
    const [delivery] = await q<{ state: string; message_info: string }>('SELECT state, message_info FROM deliveries');
    assert.equal(delivery!.state, 'pending');
    assert.deepEqual((JSON.parse(delivery!.message_info) as { reply_to: string[]; content: string }).reply_to, [m1.msgId, m2.msgId]);
    assert.deepEqual(await q('SELECT reply_outcome, reply_msg_id FROM messages ORDER BY id'), [
      { reply_outcome: 'answered', reply_msg_id: replies[0]!.msg_id },
      { reply_outcome: 'answered', reply_msg_id: replies[0]!.msg_id },
    ]);
    assert.deepEqual(await q('SELECT * FROM due_replies'), [], 'the timer ended with the reply');
  });

  it('a newer message stored on node A while node B’s engine works drops B’s answer; one reply answers both', async () => {
    const { events, worker, say, q } = await fresh(2);
    const clock = manualClock(T0);
    const script = scripted();
    script.hold();
    const m1 = await say({ content: 'first question' }, T0);
    worker(1, 'b', clock, script.engine).start();
    await driveClock(clock, (async () => { while (script.waiting() === 0) await new Promise((r) => setTimeout(r, 5)); })(), { stepMs: 100 });
    const m2 = await say({ content: 'and a second one' }, clock.now());
    script.release();
    await events.until((s) => s.length > 0);
    assert.deepEqual(events.seen.map((e) => e.result), ['stale']);
    assert.deepEqual(await q('SELECT count(*)::int AS n FROM replies'), [{ n: 0 }], 'the dropped answer left nothing');
    const { elapsedMs } = await driveClock(clock, events.until((s) => s.length > 1), { stepMs: 100 });
    assert.ok(elapsedMs <= 10_000, `the timer, released, fired at the newer message's time (${elapsedMs} ms later), not when the lease ran out`);
    assert.deepEqual(events.seen.map((e) => e.result), ['stale', 'answered']);
    const replies = await q<{ reply_to: string }>('SELECT reply_to FROM replies');
    assert.deepEqual(replies.map((r) => JSON.parse(r.reply_to) as string[]), [[m1.msgId, m2.msgId]]);
    assert.equal(script.calls.length, 2);
  });

  it('two nodes racing over many due conversations answer each batch exactly once', async () => {
    const { events, worker, say, q } = await fresh(2);
    const clock = manualClock(T0);
    const script = scripted();
    const n = 40;
    for (let i = 0; i < n; i++) await say({ from_user_id: `c${i}`, content: `q${i}` }, T0 + (i % 5));
    worker(0, 'a', clock, script.engine, { concurrency: 3 }).start();
    worker(1, 'b', clock, script.engine, { concurrency: 3 }).start();
    await driveClock(clock, events.until((s) => s.length >= n), { stepMs: 100 });
    assert.equal(events.seen.length, n);
    assert.deepEqual(new Set(events.seen.map((e) => e.result)), new Set(['answered']));
    assert.equal(new Set(events.seen.map((e) => e.conversationId)).size, n, 'each conversation answered once');
    assert.deepEqual(await q('SELECT count(*)::int AS replies, count(DISTINCT conversation_id)::int AS conversations FROM replies'), [{ replies: n, conversations: n }]);
    assert.deepEqual(await q("SELECT count(*)::int AS n FROM messages WHERE reply_outcome = 'answered'"), [{ n }]);
    const shares = ['a', 'b'].map((node) => events.seen.filter((e) => e.node === node).length);
    assert.ok(shares.every((s) => s > 0), `both nodes answered some: ${shares}`);
  });

  it('customers writing through both nodes while both answer: every message answered, by exactly one reply', async () => {
    const { pools, events, worker, q } = await fresh(2);
    const clock = manualClock(T0);
    const runners = pools.map((p) => createPgIngestRunner(p));
    worker(0, 'a', clock, scripted().engine, { concurrency: 3 }).start();
    worker(1, 'b', clock, scripted().engine, { concurrency: 3 }).start();
    const customers = 12;
    const rounds = 4;
    const pending = async (): Promise<number> => (await q<{ n: number }>("SELECT count(*)::int AS n FROM messages WHERE reply_outcome = 'pending'"))[0]!.n;
    const traffic = (async () => {
      for (let round = 0; round < rounds; round++) {
        // Each customer writes once a round, through one node or the other; the gaps around the quiet period (2 s) vary.
        await Promise.all(
          Array.from({ length: customers }, (_, i) =>
            runners[(i + round) % 2]!.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: `c${i}`, content: `round ${round}` }, clock.now(), SETTINGS) }),
          ),
        );
        const until = clock.now() + 1_000 + round * 700;
        while (clock.now() < until) await new Promise((r) => setTimeout(r, 3));
      }
      while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 10));
    })();
    await driveClock(clock, traffic, { stepMs: 100 });
    const replies = await q<{ reply_to: string }>('SELECT reply_to FROM replies');
    const answered = replies.flatMap((r) => JSON.parse(r.reply_to) as string[]);
    assert.equal(answered.length, customers * rounds, 'as many answered messages as were written');
    assert.equal(new Set(answered).size, answered.length, 'none answered twice');
    // A reply ending a timer and a newer message moving it lock the conversation first, then the timer: no deadlock (each cost a 1 s wait and a retry).
    assert.deepEqual(await q('SELECT deadlocks::int FROM pg_stat_database WHERE datname = current_database()'), [{ deadlocks: 0 }]);
    assert.deepEqual(await q("SELECT count(*)::int AS n FROM messages WHERE reply_outcome = 'answered'"), [{ n: customers * rounds }]);
    assert.deepEqual(await q('SELECT * FROM due_replies'), []);
    assert.ok(events.seen.every((e) => e.result === 'answered' || e.result === 'stale'), JSON.stringify(events.seen.filter((e) => e.result !== 'answered')));
  });

  it('a node that claims a timer and dies: another answers once the lease has run out, and the first one’s late answer is dropped', async () => {
    const { events, worker, say, q } = await fresh(2);
    const m1 = await say({ content: 'hello?' }, T0);
    // The dying node: its clock stands still (no renewals), its engine never answers until released.
    const frozen = manualClock(T0 + 2_000);
    const dying = scripted();
    dying.hold();
    worker(0, 'dies', frozen, dying.engine, { leaseMs: 10_000 }).start();
    while (dying.waiting() === 0) await new Promise((r) => setTimeout(r, 5));
    const clock = manualClock(T0 + 2_000);
    const script = scripted();
    worker(1, 'b', clock, script.engine, { leaseMs: 10_000 }).start();
    const { elapsedMs } = await driveClock(clock, events.until((s) => s.some((e) => e.node === 'b')), { stepMs: 250 });
    assert.ok(elapsedMs >= 10_000 && elapsedMs <= 15_000, `taken over ${elapsedMs} ms after the claim (lease 10 s)`);
    assert.deepEqual(events.seen, [{ conversationId: m1.conversationId, result: 'answered', node: 'b' }]);
    dying.release();
    await events.until((s) => s.length > 1);
    assert.deepEqual(events.seen[1], { conversationId: m1.conversationId, result: 'lost', node: 'dies' });
    assert.deepEqual(await q('SELECT count(*)::int AS n FROM replies'), [{ n: 1 }]);
  });

  it('a timer claim that committed but whose answer was lost (a dropped connection) is answered at the next look, not after its lease', async () => {
    const { pools, events, say } = await fresh(1);
    const m1 = await say({ content: 'hello?' }, T0);
    const clock = manualClock(T0 + 2_000);
    const lossy = losingFirstAnswer(pools[0]!, [CLAIM_REPLIES_SQL]);
    const logs: string[] = [];
    const w = createPgReplyWorker({
      pool: lossy,
      engine: scripted().engine,
      clock,
      nodeId: 'a',
      lookupClient: (id) => (id === CLIENT ? { id, enabled: true, settings, keys: [] } : undefined),
      engineTimeoutMs: 3_600_000,
      contextLines: 20,
      pollMs: 1_000,
      leaseMs: 60_000,
      onDelivery: () => {},
      onFired: (conversationId, result) => events.push({ conversationId, result, node: 'a' }),
      log: (line) => logs.push(line),
    });
    workers.push(w);
    w.start();
    const { elapsedMs } = await driveClock(clock, events.until((s) => s.length > 0), { stepMs: 250 });
    assert.equal(lossy.lost(), 1);
    assert.deepEqual(events.seen, [{ conversationId: m1.conversationId, result: 'answered', node: 'a' }]);
    assert.ok(elapsedMs <= 2_000, `answered ${elapsedMs} ms after the lost claim (lease 60 s)`);
    assert.ok(logs.some((l) => /gave back 1 timer claim/.test(l)), logs.join('\n'));
  });

  it('in a group, the per-minute cap defers the replies past it to the next free slot', async () => {
    const { pools, events, worker, say, q } = await fresh(1);
    const group = { group_id: 'g1', at_list: ['shop-bot'] };
    const first = await say({ ...group, from_user_id: 'p0', content: 'q0' }, T0);
    for (let i = 1; i < 8; i++) await say({ ...group, from_user_id: `p${i}`, content: `q${i}` }, T0 + i);
    // Six auto replies a second in (made before these messages were scheduled): the cap is spent until they are a minute old.
    for (let i = 0; i < 6; i++) {
      await pgReplyStore(pools[0]!).messages.insertReply({ conversationId: first.conversationId, kind: 'auto', msgId: `earlier-${i}`, replyTo: [], afterMessageId: 0, content: 'a', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: T0 + 1_000 });
    }
    const clock = manualClock(T0);
    worker(0, 'a', clock, scripted().engine).start();
    await driveClock(clock, events.until((s) => s.length > 0), { stepMs: 250 });
    assert.deepEqual(events.seen.map((e) => e.result), ['deferred']);
    assert.deepEqual(await q('SELECT due_at, lease_holder FROM due_replies'), [{ due_at: T0 + 1_000 + 60_001, lease_holder: null }], 'due again when the first slot frees, for any node');
    await driveClock(clock, events.until((s) => s.length > 1), { stepMs: 500 });
    assert.ok(clock.now() >= T0 + 61_001);
    assert.deepEqual(events.seen.map((e) => e.result), ['deferred', 'answered']);
    const firstAt = (await q<{ at: number }>("SELECT min(created_at) AS at FROM replies WHERE msg_id NOT LIKE 'earlier-%'"))[0]!.at;
    assert.deepEqual(await q("SELECT count(DISTINCT reply_msg_id)::int AS n FROM messages WHERE reply_outcome = 'answered'"), [{ n: 6 }], 'six customers answered: the cap');
    assert.deepEqual(await q('SELECT due_at FROM due_replies'), [{ due_at: firstAt + 60_001 }], 'the other two wait for the next slot');
    // The six replies were made over a little clock time (it moves while they commit): slots free one by one.
    const answered = async (): Promise<number> => (await q<{ n: number }>("SELECT count(DISTINCT reply_msg_id)::int AS n FROM messages WHERE reply_outcome = 'answered'"))[0]!.n;
    const allAnswered = (async () => {
      for (let k = 3; (await answered()) < 8; k++) await events.until((seen) => seen.length >= k);
    })();
    await driveClock(clock, allAnswered, { stepMs: 500 });
    assert.ok(events.seen.slice(2).every((e) => e.result === 'answered' || e.result === 'deferred'), JSON.stringify(events.seen));
    const lastAt = (await q<{ at: number }>('SELECT max(created_at) AS at FROM replies'))[0]!.at;
    assert.ok(lastAt >= firstAt + 60_001, 'the last two waited for slots to free');
    assert.deepEqual(await q('SELECT * FROM due_replies'), []);
  });

  it('a node whose engine is slow keeps its claim by renewing the lease: the other node does not answer too', async () => {
    const { events, worker, say, q } = await fresh(2);
    await say({ content: 'a hard question' }, T0);
    const clock = manualClock(T0);
    const slow = scripted();
    slow.hold();
    worker(0, 'a', clock, slow.engine, { leaseMs: 3_000 }).start();
    await driveClock(clock, (async () => { while (slow.waiting() === 0) await new Promise((r) => setTimeout(r, 5)); })(), { stepMs: 100 });
    const other = scripted();
    worker(1, 'b', clock, other.engine, { leaseMs: 3_000 }).start();
    // 15 s of clock time (five leases long) with nothing to wait for: driveClock gives up, as meant.
    await assert.rejects(driveClock(clock, new Promise<void>(() => {}), { stepMs: 100, maxMs: 15_000 }), /nothing settled/);
    assert.equal(other.calls.length, 0, 'b never claimed it');
    assert.equal(events.seen.length, 0);
    slow.release();
    await events.until((s) => s.length > 0);
    assert.deepEqual(events.seen.map((e) => [e.node, e.result]), [['a', 'answered']]);
    assert.deepEqual(await q('SELECT count(*)::int AS n FROM replies'), [{ n: 1 }]);
  });

  it('messages past the stale limit are settled stale, not answered, and the timer ends', async () => {
    const { events, worker, say, q } = await fresh(1);
    // Written 9 minutes before it reached us (staleMinutes: 10); no node fires its timer for 2 more minutes (all were down).
    await say({ content: 'anyone?', create_timestamp: Math.floor(T0 / 1000) - 9 * 60 }, T0);
    const clock = manualClock(T0 + 120_000);
    const script = scripted();
    worker(0, 'a', clock, script.engine).start();
    await driveClock(clock, events.until((s) => s.length > 0), { stepMs: 250 });
    assert.deepEqual(events.seen.map((e) => e.result), ['closed']);
    assert.equal(script.calls.length, 0);
    assert.deepEqual(await q('SELECT reply_outcome, reply_note FROM messages'), [{ reply_outcome: 'stale', reply_note: 'waited past the stale limit (was the service down?)' }]);
    assert.deepEqual(await q('SELECT * FROM due_replies'), []);
  });

  it('an engine failure is a handoff: the fallback text is sent, the conversation needs a human, the console is alerted once', async () => {
    const { events, alerts, worker, say, q } = await fresh(1);
    const m1 = await say({ content: 'can I speak to a person?' }, T0);
    const clock = manualClock(T0);
    const failing: Engine = { name: 'down', answer: () => Promise.reject(new Error('model unreachable')) };
    worker(0, 'a', clock, failing).start();
    await driveClock(clock, events.until((s) => s.length > 0), { stepMs: 250 });
    assert.deepEqual(events.seen.map((e) => e.result), ['answered']);
    assert.deepEqual(await q('SELECT content, handoff, cause FROM replies'), [{ content: 'A human will answer.', handoff: 1, cause: 'model unreachable' }]);
    const [delivery] = await q<{ message_info: string }>('SELECT message_info FROM deliveries');
    assert.equal((JSON.parse(delivery!.message_info) as { content: string }).content, 'A human will answer.');
    assert.deepEqual(await q('SELECT needs_human, needs_human_reason FROM conversations'), [{ needs_human: 1, needs_human_reason: 'no_answer' }]);
    assert.deepEqual(await q('SELECT reply_outcome FROM messages'), [{ reply_outcome: 'handoff' }]);
    assert.deepEqual(alerts, [`${m1.conversationId}:handoff`]);
  });

  it('a node that does not know the client yet (its copy a second behind) fires the timer again shortly instead of ending it', async () => {
    const { events, worker, say, q } = await fresh(1);
    const clock = manualClock(T0);
    const script = scripted();
    let known = false;
    await say({ content: 'Where is my order?' }, T0);
    worker(0, 'a', clock, script.engine, { knows: () => known }).start();
    await driveClock(clock, events.until((s) => s.length > 0), { stepMs: 500 });
    assert.deepEqual(events.seen.map((e) => e.result), ['deferred']);
    assert.equal((await q<{ n: number }>('SELECT count(*)::int AS n FROM due_replies'))[0]!.n, 1, 'the timer stays');
    known = true;
    await driveClock(clock, events.until((s) => s.some((e) => e.result === 'answered')), { stepMs: 500 });
    assert.equal((await q<{ n: number }>('SELECT count(*)::int AS n FROM replies'))[0]!.n, 1);
  });
});
