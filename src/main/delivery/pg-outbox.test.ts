import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSecretKey } from 'node:crypto';
import type pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from '../../../test/helpers/postgres.ts';
import { copyDatabase, createTemplate, losingFirstAnswer } from '../../../test/helpers/pg-work-fixture.ts';
import { eventually, settle, startReceiver, verifyDelivery, type Receiver } from '../../../test/helpers/receiver.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';
import { manualClock, type ManualClock } from '../../shared/clock.ts';
import { openPgPool } from '../store/pg/pool.ts';
import { originOf } from '../store/delivery-lanes.ts';
import type { TurnSlicer } from '../loop/turn-slicer.ts';
import { createPgOutbox, type PgOutbox, type PgOutboxDeps } from './pg-outbox.ts';
import { CLAIM_DELIVERIES_SQL, CLAIM_LANE_SQL } from '../store/pg/leases/pg-delivery-leases.ts';
import { RETRY_SCHEDULE_MS } from './retry-policy.ts';
import { createSender } from './sender.ts';

const skip = postgresSkipReason();
const T0 = Date.UTC(2027, 0, 1);
const SECRET = 'pg-outbox-secret-0123456789abcdef';
const client = { id: 'acme', enabled: true, settings: DEFAULT_CLIENT_SETTINGS, keys: [createSecretKey(Buffer.from(SECRET))] };

describe('the outbox on PostgreSQL, across nodes', { skip, timeout: 120_000 }, () => {
  let server: PgServer;
  let databases = 0;
  const cleanup: Array<() => Promise<unknown> | void> = [];
  before(async () => {
    server = await startPostgres();
    await createTemplate(server.url, 'outbox_template');
  });
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });
  after(() => server?.stop());

  /** A fresh database and `n` pools on it, one per node. */
  async function database(n: number): Promise<pg.Pool[]> {
    const url = await copyDatabase(server.url, 'outbox_template', `outbox_${++databases}`);
    return Array.from({ length: n }, (_, i) => {
      const pool = openPgPool(url, { max: 4, applicationName: `node-${i}`, onIdleError: () => {} });
      cleanup.push(() => pool.end());
      return pool;
    });
  }

  async function receiver(clock: ManualClock): Promise<Receiver> {
    const r = await startReceiver('/hook', { now: () => clock.now() });
    cleanup.push(() => r.close());
    return r;
  }

  /**
   * `conversations` conversations (`${prefix}1` …) with `per` pending auto replies each for the
   * receiver, due at `at`, ids given round-robin across conversations (as replies arrive).
   */
  async function seed(pool: pg.Pool, url: string, o: { conversations: number; per: number; at: number; prefix?: string; autoReply?: string }): Promise<void> {
    const prefix = o.prefix ?? 'v';
    await pool.query("INSERT INTO clients (id, created_at, updated_at) VALUES ('acme', 1, 1) ON CONFLICT DO NOTHING");
    await pool.query(
      `INSERT INTO conversations (id, client_id, channel, peer, customer_id, auto_reply, created_at, last_message_at)
       SELECT $1 || i, 'acme', 'im', 'u:' || $1 || i, $1 || i, $3, 1, 1 FROM generate_series(1, $2::int) i`,
      [prefix, o.conversations, o.autoReply ?? 'active'],
    );
    await pool.query(
      `INSERT INTO replies (conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, created_at)
       SELECT $1 || c, 'auto', $1 || c || '-' || k, '["m"]', 0, 'reply ' || k, 0, 'kb', 1
       FROM generate_series(1, $3::int) k, generate_series(1, $2::int) c ORDER BY k, c`,
      [prefix, o.conversations, o.per],
    );
    await pool.query(
      `INSERT INTO deliveries (reply_id, reply_msg_id, conversation_id, client_id, send_url, message_info, state, next_attempt_at, created_at, updated_at, origin)
       SELECT r.id, r.msg_id, r.conversation_id, 'acme', $2,
         json_build_object('msg_id', r.msg_id, 'reply_to', json_build_array('m'), 'conversation_id', r.conversation_id, 'to_user_id', r.conversation_id,
           'content', r.content, 'message_type', 1, 'event_type', 'auto_dialog', 'from_user_type', 4, 'create_timestamp', 1)::text,
         'pending', $3, 1, 1, $4
       FROM replies r WHERE r.conversation_id LIKE $1 || '%' ORDER BY r.id`,
      [prefix, url, o.at, originOf(url)],
    );
  }

  function outbox(pool: pg.Pool, clock: ManualClock, nodeId: string, extra: Partial<PgOutboxDeps> = {}): PgOutbox & { logs: string[] } {
    const logs: string[] = [];
    const send = createSender();
    const o = createPgOutbox({ pool, send, clock, nodeId, lookupClient: () => client, concurrency: 4, pollMs: 1000, random: () => 0.5, log: (l) => logs.push(l), ...extra });
    cleanup.push(() => send.close());
    cleanup.push(() => o.stop(0));
    return Object.assign(o, { logs });
  }

  const rows = async (pool: pg.Pool, where = 'true') =>
    (await pool.query<{ id: number; state: string; attempts: number; lease_count: number; lease_holder: string | null }>(
      `SELECT id, state, attempts, lease_count, lease_holder FROM deliveries WHERE ${where} ORDER BY id`,
    )).rows;

  it('two nodes deliver every pending delivery once, in order per conversation, never two of a conversation at once, signed with the client’s key', async () => {
    const [a, b] = await database(2);
    const clock = manualClock(T0);
    const rx = await receiver(clock);
    // Fewer conversations than the two nodes' slots: a rule broken shows as two of one conversation at once.
    const CONVERSATIONS = 6;
    const PER = 12;
    await seed(a!, rx.url, { conversations: CONVERSATIONS, per: PER, at: T0 });
    // The receiver holds each answer for a few turns, and records a second request of a conversation it has not answered.
    const open = new Map<string, number>();
    let overlaps = 0;
    rx.respond = (r) => {
      const conv = String(r.body.message_info['conversation_id']);
      if (open.get(conv)) overlaps++;
      open.set(conv, (open.get(conv) ?? 0) + 1);
      const hold = (async () => {
        for (let i = 0; i < 3; i++) await new Promise((res) => setImmediate(res));
        open.set(conv, open.get(conv)! - 1);
      })();
      return { status: 200, hold };
    };
    const byNode = { a: 0, b: 0 };
    const nodes = [
      outbox(a!, clock, 'node-a', { onAttempt: (v) => v === 'sent' && byNode.a++ }),
      outbox(b!, clock, 'node-b', { onAttempt: (v) => v === 'sent' && byNode.b++ }),
    ];
    for (const n of nodes) n.start();
    await eventually(async () => (await rows(a!, "state = 'sent'")).length === CONVERSATIONS * PER && nodes.every((n) => n.busy() === 0), 'every delivery sent', 30_000);
    await settle(50);
    assert.equal(rx.received.length, CONVERSATIONS * PER, 'each delivery sent once');
    assert.equal(overlaps, 0, 'two of one conversation in flight at once');
    assert.equal(new Set(rx.received.map((r) => r.key)).size, CONVERSATIONS * PER);
    assert.ok(byNode.a > 0 && byNode.b > 0, `both nodes sent a share: ${byNode.a}/${byNode.b}`);
    const perConversation = new Map<string, string[]>();
    for (const r of rx.received) {
      assert.equal(verifyDelivery(r, SECRET), true, 'verifiable with the client’s secret, within the receiver’s 300 s window');
      assert.equal(r.key, r.body.message_info['msg_id'], 'Idempotency-Key is the reply’s msg_id');
      assert.equal(r.body.client, 'acme');
      assert.equal(r.headers['user-agent'], 'Switchboard/1');
      assert.equal(r.headers['content-type'], 'application/json');
      const conv = String(r.body.message_info['conversation_id']);
      perConversation.set(conv, [...(perConversation.get(conv) ?? []), r.key]);
    }
    for (const [conv, keys] of perConversation) assert.deepEqual(keys, Array.from({ length: PER }, (_, k) => `${conv}-${k + 1}`), `order of ${conv}`);
    const left = await a!.query('SELECT max(lease_count) AS claims, count(lease_holder)::int AS leased, sum(attempts)::int AS attempts FROM deliveries');
    assert.deepEqual(left.rows[0], { claims: 1, leased: 0, attempts: CONVERSATIONS * PER });
  });

  it('a receiver that holds every request takes at most perOrigin of a node’s slots; another receiver’s deliveries go meanwhile', async () => {
    const [a] = await database(1);
    const clock = manualClock(T0);
    const slow = await receiver(clock);
    const fast = await receiver(clock);
    let answer: () => void = () => {};
    const held = new Promise<void>((r) => (answer = r));
    slow.respond = () => ({ status: 200, hold: held });
    cleanup.push(() => answer());
    // The slow receiver's deliveries are older: without the cap they would take every slot first.
    await seed(a!, slow.url, { conversations: 6, per: 1, at: T0 - 1_000, prefix: 's' });
    await seed(a!, fast.url, { conversations: 6, per: 2, at: T0, prefix: 'f' });
    const n = outbox(a!, clock, 'node-a', { concurrency: 4, perOrigin: 2 });
    n.start();
    await eventually(async () => (await rows(a!, "state = 'sent'")).length === 12 && n.busy() === 2, 'the fast receiver’s twelve sent');
    await settle(30);
    assert.equal(slow.received.length, 2, 'two slots, no more, held by the slow receiver');
    answer();
    await eventually(async () => (await rows(a!, "state = 'sent'")).length === 18 && n.busy() === 0, 'then the slow receiver’s');
  });

  it('a receiver answering 500 is retried on the retry schedule as the clock moves, then the delivery dies: needs_human and one alert', async () => {
    const [a] = await database(1);
    const clock = manualClock(T0);
    const rx = await receiver(clock);
    rx.respond = () => ({ status: 500 });
    await seed(a!, rx.url, { conversations: 1, per: 1, at: T0 });
    const alerts: string[] = [];
    const verdicts: string[] = [];
    // No poll in the way: the outbox wakes at the retry's time, or not at all.
    const n = outbox(a!, clock, 'node-a', { pollMs: 100 * 3_600_000, onAlert: (c, reason) => alerts.push(`${c} ${reason}`), onAttempt: (v) => verdicts.push(v) });
    n.start();
    const quiet = (tries: number) => eventually(async () => rx.received.length === tries && (await rows(a!))[0]!.attempts === tries && n.busy() === 0, `try ${tries} recorded`);
    await quiet(1);
    for (const [i, wait] of RETRY_SCHEDULE_MS.entries()) {
      clock.advance(wait - 1);
      await settle(30);
      assert.equal(rx.received.length, i + 1, `no try ${i + 2} before its time`);
      clock.advance(1);
      await quiet(i + 2);
    }
    const at = rx.received.map((r) => r.clockAt! - T0);
    const expected = RETRY_SCHEDULE_MS.reduce<number[]>((acc, w) => [...acc, acc.at(-1)! + w], [0]);
    assert.deepEqual(at, expected, 'tries at the schedule’s times');
    assert.deepEqual(new Set(rx.received.map((r) => r.key)).size, 1, 'one Idempotency-Key throughout');
    assert.deepEqual(verdicts, [...RETRY_SCHEDULE_MS.map(() => 'retry'), 'dead']);
    const conv = (await a!.query('SELECT needs_human, needs_human_reason FROM conversations WHERE id = $1', ['v1'])).rows[0];
    assert.deepEqual(conv, { needs_human: 1, needs_human_reason: 'delivery_failed' });
    assert.deepEqual(alerts, ['v1 delivery_failed']);
    const [row] = await rows(a!);
    assert.equal(row!.state, 'dead');
    const attempts = (await a!.query('SELECT attempt, status, outcome FROM delivery_attempts ORDER BY attempt')).rows;
    assert.deepEqual(attempts.map((r) => [r.attempt, r.status, r.outcome]), [...RETRY_SCHEDULE_MS.map((_, i) => [i + 1, 500, 'retry']), [8, 500, 'dead']]);
  });

  it('a node that claims and never completes: another sends after the lease runs out, with the same Idempotency-Key; the first one’s late record changes nothing', async () => {
    const [a, b] = await database(2);
    const LEASE = 3_000;
    // Node a's clock never moves again: a frozen process, which neither renews nor completes.
    const frozen = manualClock(T0);
    const clock = manualClock(T0);
    const rx = await receiver(clock);
    const answers: Array<() => void> = [];
    const holds = [0, 1].map(() => new Promise<void>((r) => answers.push(r)));
    // Node a's try, then node b's try of the same delivery, are held until the test answers them.
    rx.respond = (_r, i) => ({ status: 200, hold: holds[i] });
    cleanup.push(() => answers.forEach((answer) => answer()));
    await seed(a!, rx.url, { conversations: 1, per: 2, at: T0 });
    const na = outbox(a!, frozen, 'node-a', { leaseMs: LEASE });
    na.start();
    await eventually(() => rx.received.length === 1, 'node a’s try');
    const nb = outbox(b!, clock, 'node-b', { leaseMs: LEASE });
    nb.start();
    const step = async (ms: number) => {
      clock.advance(ms);
      await eventually(() => nb.busy() === nb.inFlight(), 'node b’s scan done');
    };
    for (let t = 0; t < LEASE - 1000; t += 1000) await step(1000);
    await settle(30);
    assert.equal(rx.received.length, 1, 'nothing sent while a’s lease holds, not even the conversation’s next one');
    await step(1000);
    await eventually(() => rx.received.length === 2, 'node b’s try once the lease ran out');
    // Node a wakes up and records its try while node b's is on its way: refused, logged.
    answers[0]!();
    await eventually(() => na.busy() === 0, 'node a’s late try ends');
    assert.ok(na.logs.some((l) => /taken over by another node/.test(l)), `node a logs the lost lease: ${na.logs.join(' | ')}`);
    assert.deepEqual((await rows(b!)).map((r) => [r.state, r.attempts, r.lease_count, r.lease_holder]), [['pending', 0, 2, 'node-b'], ['pending', 0, 0, null]], 'a’s late record changed nothing');
    answers[1]!();
    await eventually(async () => (await rows(b!, "state = 'sent'")).length === 2 && nb.busy() === 0, 'node b sent both');
    assert.deepEqual(rx.received.map((r) => r.key), ['v1-1', 'v1-1', 'v1-2'], 'the same Idempotency-Key again, then the next one');
    assert.deepEqual((await rows(b!)).map((r) => [r.state, r.attempts, r.lease_count]), [['sent', 1, 2], ['sent', 1, 1]], 'lease_count 2 counts the takeover');
    assert.equal((await a!.query('SELECT count(*)::int AS n FROM delivery_attempts')).rows[0].n, 2);
  });

  it('a live node renews its leases every third of a lease: a slow try is not taken over, however long it takes', async () => {
    const [a, b] = await database(2);
    const LEASE = 3_000;
    const clock = manualClock(T0);
    const rx = await receiver(clock);
    let answer: () => void = () => {};
    const held = new Promise<void>((r) => (answer = r));
    rx.respond = (_r, i) => (i === 0 ? { status: 200, hold: held } : { status: 200 });
    cleanup.push(() => answer());
    await seed(a!, rx.url, { conversations: 1, per: 1, at: T0 });
    const na = outbox(a!, clock, 'node-a', { leaseMs: LEASE });
    na.start();
    await eventually(() => rx.received.length === 1, 'node a’s try');
    const nb = outbox(b!, clock, 'node-b', { leaseMs: LEASE });
    nb.start();
    // In steps of the renewal period, each renewal committed before the clock moves on.
    for (let t = 0; t < 5 * LEASE; t += LEASE / 3) {
      clock.advance(LEASE / 3);
      await eventually(async () => nb.busy() === 0 && Number((await rows(a!))[0]!.lease_count) === 1 && (await a!.query('SELECT lease_until FROM deliveries')).rows[0].lease_until >= clock.now() + LEASE - LEASE / 3, 'renewed');
    }
    assert.equal(rx.received.length, 1, 'never sent twice');
    answer();
    await eventually(async () => (await rows(a!, "state = 'sent'")).length === 1 && na.busy() === 0, 'node a records its try');
    assert.deepEqual((await rows(a!)).map((r) => [r.state, r.attempts, r.lease_count, r.lease_holder]), [['sent', 1, 1, null]]);
  });

  it('a claim that committed but whose answer was lost (a dropped connection) is given back at the next scan, not after its lease', async () => {
    const [a] = await database(1);
    const clock = manualClock(T0);
    const rx = await receiver(clock);
    await seed(a!, rx.url, { conversations: 2, per: 1, at: T0 });
    // The claim's statement runs and commits; the node gets an error instead of the rows, as when the connection drops around the COMMIT.
    const lossy = losingFirstAnswer(a!, [CLAIM_DELIVERIES_SQL, CLAIM_LANE_SQL]);
    const na = outbox(lossy, clock, 'node-a');
    na.start();
    await eventually(async () => lossy.lost() === 1 && (await rows(a!, "lease_holder = 'node-a'")).length > 0 && na.busy() === 0, 'a claim committed unseen');
    // The next poll, long before the 60 s lease would have run out.
    clock.advance(1000);
    await eventually(async () => (await rows(a!, "state = 'sent'")).length === 2 && na.busy() === 0, 'both sent after the next scan');
    assert.equal(rx.received.length, 2);
    assert.ok(na.logs.some((l) => /gave back \d+ delivery claim\(s\) a failed claim had committed unseen/.test(l)), na.logs.join('\n'));
  });

  it('stop gives back the claims not yet sent (another node sends them at once) and waits for the one on its way', async () => {
    const [a, b] = await database(2);
    const clock = manualClock(T0);
    const rx = await receiver(clock);
    let answer: () => void = () => {};
    const held = new Promise<void>((r) => (answer = r));
    rx.respond = (_r, i) => (i === 0 ? { status: 200, hold: held } : { status: 200 });
    cleanup.push(() => answer());
    await seed(a!, rx.url, { conversations: 3, per: 1, at: T0 });
    // A slicer run by hand: claimed deliveries wait in it, unsent, until the test starts them.
    const tasks: Array<() => void> = [];
    const slicer: TurnSlicer = { run: (task) => (tasks.push(task), () => {}), pending: () => tasks.length };
    const na = outbox(a!, clock, 'node-a', { slicer });
    na.start();
    await eventually(() => tasks.length === 3 && na.busy() === 3, 'three claimed');
    tasks.shift()!();
    await eventually(() => rx.received.length === 1, 'the first on its way');
    const stopping = na.stop(10_000);
    await eventually(async () => (await rows(a!, 'lease_holder IS NULL')).length === 2, 'two given back');
    const leased = await rows(a!, 'lease_holder IS NOT NULL');
    assert.deepEqual(leased.map((r) => [r.state, r.lease_holder]), [['pending', 'node-a']], 'the one on its way keeps its lease');
    for (const t of tasks.splice(0)) t();
    const nb = outbox(b!, clock, 'node-b');
    nb.start();
    await eventually(async () => (await rows(b!, "state = 'sent'")).length === 2 && nb.busy() === 0, 'node b sent the two given back, at the same clock time');
    let stopped = false;
    void stopping.then(() => (stopped = true));
    await settle(30);
    assert.equal(stopped, false, 'stop waits for the try on its way');
    answer();
    await stopping;
    const all = await rows(a!);
    assert.deepEqual(all.map((r) => [r.state, r.attempts, r.lease_count]), [['sent', 1, 1], ['sent', 1, 2], ['sent', 1, 2]]);
    assert.equal(rx.received.length, 3);
  });

  it('an auto reply whose conversation a human took over is cancelled, never sent; a delivery cancelled during its try is recorded against it', async () => {
    const [a] = await database(1);
    const clock = manualClock(T0);
    const rx = await receiver(clock);
    await seed(a!, rx.url, { conversations: 1, per: 1, at: T0, prefix: 's', autoReply: 'stopped' });
    let answer: () => void = () => {};
    const held = new Promise<void>((r) => (answer = r));
    rx.respond = () => ({ status: 200, hold: held });
    cleanup.push(() => answer());
    await seed(a!, rx.url, { conversations: 1, per: 1, at: T0, prefix: 'w' });
    const verdicts: string[] = [];
    const n = outbox(a!, clock, 'node-a', { onAttempt: (v, c) => verdicts.push(`${c} ${v}`) });
    n.start();
    await eventually(() => rx.received.length === 1, 'the active conversation’s try');
    assert.equal(rx.received[0]!.key, 'w1-1');
    // The console cancels it while the receiver holds the answer; the receiver then accepts it.
    await a!.query("UPDATE deliveries SET state = 'cancelled', last_error = 'by test' WHERE conversation_id = 'w1'");
    answer();
    await eventually(() => verdicts.length === 2 && n.busy() === 0, 'both settled');
    assert.deepEqual(verdicts.sort(), ['s1 cancelled', 'w1 sent']);
    const got = (await a!.query("SELECT conversation_id, state, attempts, last_error FROM deliveries ORDER BY conversation_id")).rows;
    assert.deepEqual(got, [
      { conversation_id: 's1', state: 'cancelled', attempts: 0, last_error: 'auto-reply stopped when the delivery was due' },
      { conversation_id: 'w1', state: 'sent', attempts: 1, last_error: null },
    ]);
    assert.equal(rx.received.length, 1);
  });
});
