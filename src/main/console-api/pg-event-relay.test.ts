import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from '../../../test/helpers/postgres.ts';
import { driveClock } from '../../../test/helpers/drive-clock.ts';
import { manualClock, type ManualClock } from '../../shared/clock.ts';
import type { ConsoleEvent } from '../../shared/console-api.ts';
import type { Caller } from '../../shared/console-roles.ts';
import { createEventBus, type EventBus, type Subscription } from './events.ts';
import { EVENTS_CHANNEL, startPgEventRelay, type PgEventRelay, type PgEventRelayOptions } from './pg-event-relay.ts';
import { NOTIFY_MAX_BYTES } from './pg-event-wire.ts';

const skip = postgresSkipReason();

const agent = (id: string): Caller => ({ role: 'agent', owner: false, account: { id, name: id }, address: null, session: null });
const who = { peer: 'wxid_4f9c2a7b3e8d1f6a', groupId: 'g-8f3a2c', groupName: '上海浦东新区客户服务交流群（二〇二六年春季售后专线）', customerId: 'cust-20260129-0042', customerName: '王小明（浦东新区张江高科技园区）' };
const longChinese = '您好，我上周在你们的网店买了一台空气净化器，收到以后发现滤网的包装是破的，机器开机以后有很大的噪音，'.repeat(4);

interface Node {
  bus: EventBus;
  relay: PgEventRelay;
  logs: string[];
  clock: ManualClock;
  /** Resolves when the relay logs a line matching `pattern` (one logged already included). */
  logged(pattern: RegExp): Promise<string>;
}

/** Resolves with the first event `bus` gives a console subscribed with `options` that `match`es. */
function next(bus: EventBus, match: (e: ConsoleEvent) => boolean, options: Subscription = {}, what = 'an event'): Promise<ConsoleEvent> {
  return new Promise((ok, fail) => {
    // A guard only (the test waits on the event): a lost event fails in seconds, not at the file's time-out.
    const guard = setTimeout(() => (stop(), fail(new Error(`no ${what} within 10 s`))), 10_000);
    const stop = bus.subscribe((e) => {
      if (!match(e)) return;
      clearTimeout(guard);
      stop();
      ok(e);
    }, options);
  });
}

describe('console events between nodes over LISTEN/NOTIFY', { skip, timeout: 120_000 }, () => {
  let server: PgServer;
  let admin: pg.Client;
  let databases = 0;
  let running: Node[] = [];

  before(async () => {
    server = await startPostgres();
    admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
  });
  afterEach(async () => {
    await Promise.all(running.map((n) => n.relay.close()));
    running = [];
  });
  after(async () => {
    await admin?.end();
    await server?.stop();
  });

  const urlOf = (db: string): string => server.url.replace(/\/postgres$/, `/${db}`);
  async function freshDatabase(): Promise<string> {
    const name = `events_${++databases}`;
    await admin.query(`CREATE DATABASE ${name} TEMPLATE template0`);
    return name;
  }

  function startNode(db: string, nodeId: string, options: Partial<PgEventRelayOptions> = {}): Node {
    const bus = createEventBus();
    const logs: string[] = [];
    const waiting = new Set<{ pattern: RegExp; ok: (line: string) => void }>();
    const log = (line: string): void => {
      logs.push(line);
      for (const w of waiting) {
        if (!w.pattern.test(line)) continue;
        waiting.delete(w);
        w.ok(line);
      }
    };
    const logged = (pattern: RegExp): Promise<string> => {
      const found = logs.find((l) => pattern.test(l));
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((ok, fail) => {
        const w = { pattern, ok: (line: string) => (clearTimeout(guard), ok(line)) };
        const guard = setTimeout(() => (waiting.delete(w), fail(new Error(`${nodeId} logged nothing like ${pattern} within 10 s:\n${logs.join('\n')}`))), 10_000);
        waiting.add(w);
      });
    };
    const clock = manualClock();
    const relay = startPgEventRelay({ newClient: () => new pg.Client({ connectionString: urlOf(db), keepAlive: true }), nodeId, bus, log, clock, ...options });
    const node = { bus, relay, logs, clock, logged };
    running.push(node);
    return node;
  }
  async function twoNodes(): Promise<[Node, Node, string]> {
    const db = await freshDatabase();
    const a = startNode(db, 'node-a');
    const b = startNode(db, 'node-b');
    await Promise.all([a.relay.ready, b.relay.ready]);
    return [a, b, db];
  }

  it('an event emitted on A reaches the consoles on B it is for, within 1 s, and never comes back to A', async () => {
    const [a, b] = await twoNodes();
    const got: Record<string, string[]> = { omar: [], ann: [], all: [], a: [] };
    b.bus.subscribe((e) => got['omar']!.push(e.type), { caller: agent('omar') });
    b.bus.subscribe((e) => got['ann']!.push(e.type), { caller: () => agent('ann') });
    b.bus.subscribe((e) => got['all']!.push(e.type));
    a.bus.subscribe((e) => got['a']!.push(e.type));
    const mention: ConsoleEvent = { type: 'mention', conversationId: 'c1', noteId: 3, by: { id: 'ann', name: 'Ann' }, text: longChinese.slice(0, 200), who, recipients: ['omar'] };
    const arrived = next(b.bus, (e) => e.type === 'conversation', { caller: agent('ann') }, 'conversation event on B');
    const t0 = performance.now();
    a.bus.emit(mention);
    a.bus.emit({ type: 'conversation', conversationId: 'c1' });
    await arrived;
    const ms = performance.now() - t0;
    console.log(`A → B: ${ms.toFixed(1)} ms`);
    assert.ok(ms < 1000, `${ms} ms`);
    assert.deepEqual(got['omar'], ['mention', 'conversation'], 'the mention reaches its recipient on B');
    assert.deepEqual(got['ann'], ['conversation'], 'and nobody else');
    // B's reply went after A's events: when A has it, A has read its own notifications too.
    const back = next(a.bus, (e) => e.type === 'proposals', {}, 'B’s event on A');
    b.bus.emit({ type: 'proposals', pending: 1 });
    await back;
    assert.deepEqual(got['a'], ['mention', 'conversation', 'proposals'], 'A’s consoles got its events once (locally), not again from PostgreSQL');
    assert.equal(a.relay.state.delivered, 1);
    assert.deepEqual(a.logs, []);
  });

  it('keeps each node’s order over 1,000 events emitted at once and in separate turns; measures throughput', async () => {
    const [a, b] = await twoNodes();
    const seen: number[] = [];
    b.bus.subscribe((e) => void (e.type === 'proposals' && seen.push(e.pending)));
    const done = next(b.bus, (e) => e.type === 'proposals' && e.pending === 999, {}, 'the 1,000th event');
    const t0 = performance.now();
    for (let i = 0; i < 600; i++) a.bus.emit({ type: 'proposals', pending: i });
    for (let i = 600; i < 1000; i++) {
      a.bus.emit({ type: 'proposals', pending: i });
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    await done;
    const s = (performance.now() - t0) / 1000;
    console.log(`1,000 events A → B in ${(s * 1000).toFixed(0)} ms: ${(1000 / s).toFixed(0)} events/s`);
    assert.deepEqual(seen, Array.from({ length: 1000 }, (_, i) => i));
    // B can have them all before A's statement returns: count A's once it has closed.
    await a.relay.close();
    assert.equal(a.relay.state.sent, 1000);
    assert.deepEqual(a.relay.state.dropped, { queueFull: 0, tooBig: 0, malformed: 0, duplicate: 0 });
  });

  it('measures A → B latency one event at a time (p50, p99)', async () => {
    const [a, b] = await twoNodes();
    const ms: number[] = [];
    for (let i = 0; i < 300; i++) {
      const arrived = next(b.bus, (e) => e.type === 'activity' && e.typing[0] === `t${i}`);
      const t0 = performance.now();
      a.bus.emit({ type: 'activity', conversationId: 'c1', viewing: ['ann'], typing: [`t${i}`] });
      await arrived;
      ms.push(performance.now() - t0);
    }
    ms.sort((x, y) => x - y);
    const at = (q: number): string => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!.toFixed(2);
    console.log(`A → B latency over ${ms.length} events: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`);
    assert.ok(ms[Math.floor(0.99 * ms.length)]! < 1000);

    // Throughput: 10,000 typing events emitted 100 per turn, as a busy service would.
    const last = next(b.bus, (e) => e.type === 'activity' && e.typing[0] === 'burst-9999', {}, 'the 10,000th event');
    const t0 = performance.now();
    for (let i = 0; i < 10_000; i++) {
      a.bus.emit({ type: 'activity', conversationId: `c${i % 50}`, viewing: ['ann', 'omar'], typing: [`burst-${i}`] });
      if (i % 100 === 99) await new Promise((r) => setImmediate(r));
    }
    await last;
    const s = (performance.now() - t0) / 1000;
    console.log(`10,000 events A → B in ${(s * 1000).toFixed(0)} ms: ${(10_000 / s).toFixed(0)} events/s; ${b.relay.state.delivered} delivered on B, ${a.relay.state.dropped.queueFull} dropped on A`);
    assert.equal(a.relay.state.dropped.queueFull, 0);
  });

  it('sends an event too big for one NOTIFY in parts (the server refuses 8,000 bytes), and drops one too big for that with a log line', async () => {
    const [a, b] = await twoNodes();
    // The limit the wire format keeps to is the server's.
    await admin.query('SELECT pg_notify($1, $2)', ['probe', 'x'.repeat(NOTIFY_MAX_BYTES)]);
    await assert.rejects(admin.query('SELECT pg_notify($1, $2)', ['probe', 'x'.repeat(NOTIFY_MAX_BYTES + 1)]), /payload string too long/);

    // The largest realistic events: said and text are clipped to 200 characters, here all Chinese.
    const alert: ConsoleEvent = { type: 'alert', conversationId: 'conv-0123456789abcdef', reason: 'customer_waiting', text: 'A customer in 上海浦东新区客户服务交流群 is waiting for a reply.', said: longChinese.slice(0, 200), saidBy: who.customerName, who, recipients: ['ann', 'omar'] };
    const sizes = { alert: Buffer.byteLength(JSON.stringify(alert)), mention: Buffer.byteLength(JSON.stringify({ ...alert, type: 'mention' })) };
    // Team mode's alert goes to every watcher of the queue: 300 accounts with 40-character ids.
    const crowd = Array.from({ length: 300 }, (_, i) => `agent-${String(i).padStart(3, '0')}-${'x'.repeat(30)}`);
    const big: ConsoleEvent = { ...alert, recipients: [...crowd, 'omar'] };
    console.log(`payload sizes: alert ${sizes.alert} B, alert to 301 accounts ${Buffer.byteLength(JSON.stringify(big))} B (limit ${NOTIFY_MAX_BYTES})`);
    assert.ok(sizes.alert < NOTIFY_MAX_BYTES / 2);

    const omar = next(b.bus, (e) => e.type === 'alert', { caller: agent('omar') }, 'the big alert on B');
    let stranger = 0;
    b.bus.subscribe((e) => void (e.type === 'alert' && stranger++), { caller: agent('stranger') });
    a.bus.emit(big);
    assert.deepEqual(await omar, big, 'arrives whole');
    assert.equal(stranger, 0, 'and is still only for its recipients');

    const huge: ConsoleEvent = { ...alert, said: 'y'.repeat(100_000) };
    const resync = next(b.bus, (e) => e.type === 'resync', {}, 'resync on B');
    const after = next(b.bus, (e) => e.type === 'proposals', {}, 'the event after the dropped one');
    a.bus.emit(huge);
    a.bus.emit({ type: 'proposals', pending: 2 });
    await Promise.all([resync, after]);
    assert.equal(a.relay.state.dropped.tooBig, 1);
    assert.match(a.logs.join('\n'), /alert event is too big/);
    assert.match(b.logs.join('\n'), /1 events from another node never arrived/);
  });

  it('a terminated backend: the node listens again after its backoff, its consoles resync, and events flow both ways again', async () => {
    const [a, b] = await twoNodes();
    const pidB = b.relay.state.backendPid!;
    const resyncB = next(b.bus, (e) => e.type === 'resync', {}, 'resync on B');
    await admin.query('SELECT pg_terminate_backend($1)', [pidB]);
    const { result, elapsedMs } = await driveClock(b.clock, resyncB, { stepMs: 50 });
    assert.equal(result.status, 'fulfilled', 'B’s consoles are told to resync');
    assert.ok(elapsedMs >= 250, `waited ${elapsedMs} ms of clock time before trying again`);
    assert.notEqual(b.relay.state.backendPid, pidB);
    assert.match(b.logs.join('\n'), /lost the connection to PostgreSQL.*\n.*listening again/);
    const onB = next(b.bus, (e) => e.type === 'conversation', {}, 'A’s event on B after B came back');
    a.bus.emit({ type: 'conversation', conversationId: 'after' });
    await onB;

    // The publisher loses its connection: what it emits meanwhile is queued and goes, in order, once back.
    const lostA = next(a.bus, (e) => e.type === 'resync', {}, 'resync on A');
    await admin.query('SELECT pg_terminate_backend($1)', [a.relay.state.backendPid]);
    const seen: number[] = [];
    b.bus.subscribe((e) => void (e.type === 'proposals' && seen.push(e.pending)));
    const allFive = next(b.bus, (e) => e.type === 'proposals' && e.pending === 4, {}, 'the fifth event on B');
    for (let i = 0; i < 5; i++) a.bus.emit({ type: 'proposals', pending: i });
    assert.equal((await driveClock(a.clock, lostA, { stepMs: 50 })).result.status, 'fulfilled');
    await allFive;
    assert.deepEqual(seen, [0, 1, 2, 3, 4]);
  });

  it('a node that starts listening, or listens again, says hello: the others hear it and may tell it what it missed', async () => {
    const db = await freshDatabase();
    const hellos: string[] = [];
    let heard: () => void = () => {};
    const a = startNode(db, 'node-a', { onHello: (node) => (hellos.push(node), heard()) });
    await a.relay.ready;
    const first = new Promise<void>((ok) => (heard = ok));
    const b = startNode(db, 'node-b');
    await first;
    assert.deepEqual(hellos, ['node-b']);
    const again = new Promise<void>((ok) => (heard = ok));
    const back = next(b.bus, (e) => e.type === 'resync', {}, 'resync on B');
    await admin.query('SELECT pg_terminate_backend($1)', [b.relay.state.backendPid]);
    await driveClock(b.clock, back, { stepMs: 50 });
    await again;
    assert.deepEqual(hellos, ['node-b', 'node-b'], 'hello again once B listens again');
    // A hello is numbered with the events: the event after it is not a gap.
    const after = next(a.bus, (e) => e.type === 'conversation', {}, 'B’s event on A');
    b.bus.emit({ type: 'conversation', conversationId: 'c1' });
    await after;
    assert.equal(a.relay.state.resyncs, 0, 'no gap seen');
    assert.deepEqual(a.logs, []);
  });

  it('a batch in flight when the connection dies is sent again, in order, on the next connection', async () => {
    const [, b, db] = await twoNodes();
    // A's NOTIFY statements wait at a gate the test opens: the backend is terminated while one waits.
    let open!: () => void;
    let held = 0;
    const gate = new Promise<void>((ok) => (open = ok));
    const a = startNode(db, 'node-a2', {
      newClient: () => {
        const c = new pg.Client({ connectionString: urlOf(db) });
        const query = c.query.bind(c) as (...args: unknown[]) => Promise<unknown>;
        // Events only: the node's hello (not an event) goes at once.
        const events = (args: unknown[]): boolean => String(args[0]).includes('pg_notify') && !JSON.stringify(args[1]).includes('\\"h\\":1');
        Object.assign(c, { query: (...args: unknown[]) => (events(args) ? (held++, gate.then(() => query(...args))) : query(...args)) });
        return c;
      },
    });
    await a.relay.ready;
    const seen: number[] = [];
    b.bus.subscribe((e) => void (e.type === 'proposals' && seen.push(e.pending)));
    const all = next(b.bus, (e) => e.type === 'proposals' && e.pending === 2, {}, 'the held batch on B');
    for (let i = 0; i < 3; i++) a.bus.emit({ type: 'proposals', pending: i });
    await new Promise((r) => setImmediate(r));
    assert.equal(held, 1, 'one statement is in flight');
    const backAgain = a.logged(/listening again/);
    await admin.query('SELECT pg_terminate_backend($1)', [a.relay.state.backendPid]);
    await a.logged(/lost the connection/);
    open();
    assert.equal((await driveClock(a.clock, backAgain, { stepMs: 50 })).result.status, 'fulfilled');
    await all;
    assert.deepEqual(seen, [0, 1, 2]);
    await a.relay.close();
    assert.equal(a.relay.state.sent, 3);
    assert.equal(held, 2, 'the batch went twice: held on the first connection, sent on the second');
  });

  it('a statement PostgreSQL refuses drops its events with a log line and keeps the connection; the next events go', async () => {
    const db = await freshDatabase();
    await admin.query(`DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'relay_limited') THEN CREATE ROLE relay_limited LOGIN; END IF; END $$`);
    const owner = new pg.Client({ connectionString: urlOf(db) });
    await owner.connect();
    try {
      await owner.query('REVOKE EXECUTE ON FUNCTION pg_notify(text, text) FROM PUBLIC');
      const a = startNode(db, 'node-a', { newClient: () => new pg.Client({ connectionString: urlOf(db).replace('postgres@', 'relay_limited@') }) });
      const b = startNode(db, 'node-b');
      await Promise.all([a.relay.ready, b.relay.ready]);
      const pid = a.relay.state.backendPid;
      a.bus.emit({ type: 'conversation', conversationId: 'refused' });
      assert.match(await a.logged(/refused/), /PostgreSQL refused 1 events \(permission denied for function pg_notify\); dropped/);
      assert.equal(a.relay.state.dropped.tooBig, 1);
      assert.equal(a.relay.state.backendPid, pid, 'the same connection: a refusal is not a lost connection');
      await owner.query('GRANT EXECUTE ON FUNCTION pg_notify(text, text) TO relay_limited');
      const arrived = next(b.bus, (e) => e.type === 'conversation', {}, 'the event after the refusal');
      a.bus.emit({ type: 'conversation', conversationId: 'granted' });
      assert.deepEqual(await arrived, { type: 'conversation', conversationId: 'granted' });
    } finally {
      await owner.end();
    }
  });

  it('a notification that is not a node’s event, sent by plain SQL, is dropped with a log line; the next good one arrives', async () => {
    const [a, b, name] = await twoNodes();
    const other: string[] = [];
    b.bus.subscribe((e) => other.push(e.type));
    const db = new pg.Client({ connectionString: urlOf(name) });
    await db.connect();
    try {
      await db.query(`NOTIFY ${EVENTS_CHANNEL}, 'hello there'`);
      await db.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, JSON.stringify({ v: 1, n: 'node-x', r: 'r', s: 1, e: { type: 'telepathy' } })]);
      await db.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, JSON.stringify({ v: 1, n: 'node-x', r: 'r', s: 2, e: { type: 'mention', conversationId: 'c', noteId: 1, by: { id: 'x', name: 'X' }, text: 't' } })]);
    } finally {
      await db.end();
    }
    const good = next(b.bus, (e) => e.type === 'conversation');
    a.bus.emit({ type: 'conversation', conversationId: 'fine' });
    await good;
    assert.deepEqual(other, ['conversation']);
    assert.equal(b.relay.state.dropped.malformed, 3);
    const dropped = b.logs.filter((l) => l.includes('dropped a notification'));
    assert.equal(dropped.length, 3, b.logs.join('\n'));
    assert.match(dropped[0]!, /not JSON: hello there/);
    assert.equal(b.relay.state.connection, 'live');
  });

  it('while PostgreSQL cannot be reached, the queue stays under its cap, drops are counted and logged once, and the other nodes resync on the gap', async () => {
    const db = `events_${++databases}`;
    // The database does not exist yet: A cannot listen, and keeps trying.
    const a = startNode(db, 'node-a', { maxQueueBytes: 2000 });
    for (let i = 0; i < 100; i++) a.bus.emit({ type: 'proposals', pending: i });
    const { queuedBytes, queuedEvents, dropped } = a.relay.state;
    assert.ok(queuedBytes <= 2000 && queuedEvents > 0, `${queuedEvents} events, ${queuedBytes} bytes queued`);
    assert.equal(queuedEvents + dropped.queueFull, 100);
    assert.equal(a.logs.filter((l) => l.includes('dropping new ones')).length, 1);

    // Each attempt that fails waits twice as long as the one before.
    assert.equal((await driveClock(a.clock, a.logged(/trying again in 1000 ms/), { stepMs: 50 })).result.status, 'fulfilled');
    assert.deepEqual(a.logs.flatMap((l) => /trying again in (\d+) ms/.exec(l)?.[1] ?? []), ['250', '500', '1000']);

    await admin.query(`CREATE DATABASE ${db} TEMPLATE template0`);
    const b = startNode(db, 'node-b');
    await b.relay.ready;
    const seen: number[] = [];
    b.bus.subscribe((e) => void (e.type === 'proposals' && seen.push(e.pending)));
    const queuedArrived = next(b.bus, (e) => e.type === 'proposals' && e.pending === queuedEvents - 1, {}, 'the last queued event');
    assert.equal((await driveClock(a.clock, a.relay.ready, { stepMs: 100 })).result.status, 'fulfilled');
    await queuedArrived;
    // B can have them before A's statement returns; A takes new events again once it has.
    await a.logged(new RegExp(`sending again; ${dropped.queueFull} events were dropped`));
    assert.equal(b.relay.state.resyncs, 0, 'nothing was missed yet: the drops were the newest');
    const resync = next(b.bus, (e) => e.type === 'resync', {}, 'resync on B');
    const last = next(b.bus, (e) => e.type === 'proposals' && e.pending === 100, {}, 'the event after the drops');
    a.bus.emit({ type: 'proposals', pending: 100 });
    await Promise.all([resync, last]);
    assert.deepEqual(seen, [...Array.from({ length: queuedEvents }, (_, i) => i), 100], 'the queued ones, in order, then the new one');
    assert.match(a.logs.join('\n'), /could not listen on PostgreSQL/);
  });
});
