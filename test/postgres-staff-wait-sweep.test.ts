import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from './helpers/postgres.ts';
import { copyDatabase, createTemplate } from './helpers/pg-work-fixture.ts';
import { addPgClient, post } from './helpers/pg-node.ts';
import { eventually } from './helpers/receiver.ts';
import { keyFileBox } from '../src/main/auth/secret-box.ts';
import { serverConfigSchema } from '../src/main/config/server-config.ts';
import { startPgService, type RunningPgService } from '../src/main/pg-service.ts';
import { manualClock, type ManualClock } from '../src/shared/clock.ts';
import type { ConsoleEvent } from '../src/shared/console-api.ts';
import { ownerCallerOf } from '../src/main/console-api/operator-guard.ts';
import { createPgWriter } from '../src/main/conversations/pg-writer.ts';
import { startPgStaffWaitSweep } from '../src/main/conversations/pg-staff-wait-sweep.ts';
import { pgStore } from '../src/main/store/pg/pg-store.ts';
import type { PgQueryable } from '../src/main/store/pg/pool.ts';
import type { StoreContract } from '../src/main/store/contract.ts';

const SECRET = 'pg-staff-wait-secret-0123456789';
const MIN = 60_000;
const WAIT = 10 * MIN; // staffWaitMinutes' default
type Alert = Extract<ConsoleEvent, { type: 'alert' }>;

/**
 * Staff-wait timers live in the memory of the node that stored the customer's line. On
 * PostgreSQL a node that dies takes them with it; some node's sweep, once a minute, checks the
 * waits that fell due, and the check raises one alert however many nodes look at once.
 */
describe('staff-wait alerts on PostgreSQL nodes, when the node that stored the line is gone', { skip: postgresSkipReason(), timeout: 120_000 }, () => {
  let server: PgServer;
  let databases = 0;
  const keyFile = join(mkdtempSync(join(tmpdir(), 'sb-pg-staff-wait-')), 'shared.key');
  const box = keyFileBox(keyFile);
  const config = serverConfigSchema.parse({ port: 0, host: '127.0.0.1' });
  const running: RunningPgService[] = [];
  const pools: pg.Pool[] = [];
  /** What the nodes logged, each line after its node's id. */
  const logged: string[] = [];

  before(async () => {
    server = await startPostgres();
    await createTemplate(server.url, 'staff_wait_template');
    box.seal('make the key file');
  });
  after(async () => {
    await Promise.all(running.map((n) => n.stop()));
    await Promise.all(pools.map((p) => p.end()));
    await server?.stop();
  });

  /** A fresh installation with `names` nodes on it, all on `clock`, the client `shop` registered. */
  async function installation(clock: ManualClock, names: readonly string[]): Promise<{ storeUrl: string; nodes: RunningPgService[] }> {
    const storeUrl = await copyDatabase(server.url, 'staff_wait_template', `staff_wait_${++databases}`);
    const nodes: RunningPgService[] = [];
    for (const n of names) nodes.push(await startPgService({ config, storeUrl, secretBox: box, nodeId: `node-${n}`, clock, log: (line) => logged.push(`${n}: ${line}`) }));
    running.push(...nodes);
    await addPgClient(storeUrl, keyFile, 'shop', SECRET, { sendUrl: 'http://127.0.0.1:9/hook' });
    return { storeUrl, nodes };
  }
  const pool = (storeUrl: string): pg.Pool => {
    const p = new pg.Pool({ connectionString: storeUrl, max: 3, statement_timeout: 5000 });
    p.on('error', () => {});
    pools.push(p);
    return p;
  };
  /** Staff stop the bot from the IM, then the customer writes: a line that waits on staff. Returns its conversation. */
  async function heldLine(node: RunningPgService, customer: string): Promise<string> {
    const stop = await post(node.endpointUrl, 'shop', SECRET, { event_type: 'cmd_dialog', from_user_id: customer, content: 'stop_auto_reply' });
    assert.equal(stop.status, 200, JSON.stringify(stop.json));
    const line = await post(node.endpointUrl, 'shop', SECRET, { event_type: 'auto_dialog', from_user_id: customer, from_user_type: 2, content: 'is anyone there?' });
    assert.equal(line.status, 200, JSON.stringify(line.json));
    assert.deepEqual(line.json['reply'], { scheduled: false, reason: 'auto_reply_stopped' });
    return line.json['conversation_id'] as string;
  }
  const staffLine = (node: RunningPgService, customer: string) =>
    post(node.endpointUrl, 'shop', SECRET, { event_type: 'auto_dialog', from_user_id: 'agent-7', from_user_type: 3, to_user_id: customer, content: 'sorry, here now' });
  const needsYou = async (node: RunningPgService, id: string) => {
    const [s] = await node.console.handlers.getConversations({ ids: [id] }, ownerCallerOf(null, null));
    return [s!.needsHuman, s!.needsHumanReason, s!.needsHumanSince] as const;
  };

  it('a node that stopped before the wait fell due: another node alerts once within a minute of it, and every console hears it', async () => {
    const clock = manualClock(Date.now());
    const { nodes } = await installation(clock, ['a', 'b', 'c']);
    const [a, b, c] = nodes as [RunningPgService, RunningPgService, RunningPgService];
    const heard = { b: [] as Alert[], c: [] as Alert[] };
    b.console.events.subscribe((e) => void (e.type === 'alert' && heard.b.push(e)));
    c.console.events.subscribe((e) => void (e.type === 'alert' && heard.c.push(e)));
    /** The alerts each console heard of `id`: [node B's, node C's]. */
    const alertsOf = (id: string) => [heard.b.filter((e) => e.conversationId === id).length, heard.c.filter((e) => e.conversationId === id).length];
    // Half a minute after the nodes' minutes: the waits fall due between two sweeps. One line is
    // stored by node A, which then stops; the other by node B, which keeps running.
    clock.advance(MIN / 2);
    const orphan = await heldLine(a, 'cust-1');
    const watched = await heldLine(b, 'cust-0');
    const wroteAt = clock.now();
    await a.stop();
    running.splice(running.indexOf(a), 1);

    // The clock moves in steps that end on the nodes' minutes (a pass reads the clock once it
    // runs, after the whole step), and, once, on the due time itself.
    const step = async (ms = MIN): Promise<void> => {
      clock.advance(ms);
      await Promise.all([b.quiesce(), c.quiesce()]);
    };
    await step(MIN / 2);
    while (clock.now() + MIN < wroteAt + WAIT) await step();
    assert.deepEqual([heard.b.length, heard.c.length], [0, 0], 'not due yet');
    await step(wroteAt + WAIT - clock.now());
    await eventually(() => heard.c.length > 0, 'node B\'s alert, relayed to node C');
    assert.deepEqual(alertsOf(watched), [1, 1], 'the line node B stored: its own timer, on time');
    assert.deepEqual(alertsOf(orphan), [0, 0], 'due now, but no node has a timer for it, and no sweep came since');
    assert.deepEqual(await needsYou(b, orphan), [false, null, null]);
    // The next minute's sweep, half a minute after it fell due, finds it.
    await step(MIN / 2);
    await eventually(() => alertsOf(orphan).every((n) => n > 0), 'the alert on both nodes');
    assert.deepEqual(alertsOf(orphan), [1, 1], 'one alert, heard on the node that swept and, relayed, on the other');
    for (const alert of [...heard.b, ...heard.c]) assert.equal(alert.reason, 'staff_silent');
    assert.deepEqual(await needsYou(c, orphan), [true, 'customer_waiting', wroteAt], 'in Needs you, waiting since the line');
    const swept = logged.filter((l) => l.includes("the minute's sweep put 1 conversation(s) in Needs you"));
    assert.equal(swept.length, 1, `one node swept it: ${JSON.stringify(logged)}`);

    // Later sweeps find both in Needs you already: no second alert.
    for (let i = 0; i < 3; i++) await step();
    assert.deepEqual([alertsOf(watched), alertsOf(orphan)], [[1, 1], [1, 1]], 'no second alert');
  });

  it('one node sweeps at a time: a node whose minute comes while another sweeps skips it, and the lock is let go', async () => {
    const storeUrl = await copyDatabase(server.url, 'staff_wait_template', `staff_wait_${++databases}`);
    const clock = manualClock(Date.now());
    const sweeps: string[] = [];
    let active = 0;
    let mostAtOnce = 0;
    let finish: () => void = () => {};
    const held = new Promise<void>((resolve) => (finish = resolve));
    const passes = ['x', 'y'].map((name) =>
      startPgStaffWaitSweep({
        pool: pool(storeUrl),
        clock,
        sweep: async () => {
          sweeps.push(name);
          mostAtOnce = Math.max(mostAtOnce, ++active);
          await held;
          await new Promise<void>((resolve) => setImmediate(resolve));
          active--;
          return 0;
        },
        log: (line) => logged.push(`${name}: ${line}`),
      }),
    );
    try {
      assert.deepEqual(sweeps, [], 'no sweep at start (the watch has just read the same list)');
      clock.advance(MIN);
      // One pass is held in its sweep; the other ends (or, were both let in, sweeps too).
      await eventually(() => sweeps.length === 2 || (sweeps.length === 1 && passes.some((p) => p.busy() === 0)), 'one sweep, and the other pass over');
      assert.equal(sweeps.length, 1, 'the other node found the lock taken and skipped its minute');
    } finally {
      finish();
    }
    await Promise.all(passes.map((p) => p.settled()));
    // The next minute, a sweep again; the other node's pass may find the lock free once it is
    // over and sweep after it (each node's minute is its own), never at the same time.
    clock.advance(MIN);
    await Promise.all(passes.map((p) => p.settled()));
    assert.ok([2, 3].includes(sweeps.length), `${sweeps.length} sweeps`);
    assert.equal(mostAtOnce, 1, 'never two sweeps at once');
    await Promise.all(passes.map((p) => p.stop()));
    const observer = pool(storeUrl);
    assert.equal((await observer.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'")).rows[0].n, 0, 'the lock is let go');
  });

  it('two checks of one conversation at the same moment (the storing node and a sweeper) flag it once: one alert', async () => {
    const clock = manualClock(Date.now());
    const { storeUrl, nodes } = await installation(clock, ['d']);
    const id = await heldLine(nodes[0]!, 'cust-2');
    const due = clock.now() + WAIT;
    const observer = pool(storeUrl);
    // Each check stops once it has read the line it waits since, until the other check has too
    // or is seen waiting on the other's lock: both have looked before either flags.
    const gate = meeting(2, observer);
    const writers = [pool(storeUrl), pool(storeUrl)].map((p) => createPgWriter({ pool: p, storeOf: gated(gate.arrive), settingsOf: () => undefined, log: () => {} }));
    const results = await Promise.all(writers.map((w) => w.submit({ kind: 'staff_wait', conversationId: id, waitMs: WAIT, now: due, watchingSince: 0 })));
    gate.close();
    const alerts = results.filter((r) => r?.kind === 'staff_wait' && r.alert).length;
    assert.equal(alerts, 1, JSON.stringify(results));
    assert.deepEqual(await needsYou(nodes[0]!, id), [true, 'customer_waiting', due - WAIT]);
  });

  it('a staff line committed while a check reads counts as the answer: the conversation is not left in Needs you', async () => {
    const clock = manualClock(Date.now());
    const { storeUrl, nodes } = await installation(clock, ['e']);
    const node = nodes[0]!;
    const id = await heldLine(node, 'cust-3');
    const due = clock.now() + WAIT;
    const observer = pool(storeUrl);
    const answer: { sent?: ReturnType<typeof staffLine> } = {};
    // The check has read the unanswered line (and no second party comes): the staff line comes
    // now, and the check goes on once it has been stored or is seen waiting on the check's lock.
    const gate = meeting(2, observer, () => (answer.sent = staffLine(node, 'cust-3')));
    const writer = createPgWriter({ pool: pool(storeUrl), storeOf: gated(gate.arrive), settingsOf: () => undefined, log: () => {} });
    await writer.submit({ kind: 'staff_wait', conversationId: id, waitMs: WAIT, now: due, watchingSince: 0 });
    gate.close();
    assert.equal((await answer.sent)?.status, 200);
    assert.equal((await needsYou(node, id))[0], false, 'answered in the IM: not in Needs you');
  });
});

/** A PostgreSQL store whose staff-wait read of the waiting line stops at `arrive` before it answers. */
function gated(arrive: () => Promise<void>): (db: PgQueryable) => StoreContract {
  return (db) => {
    const store = pgStore(db);
    const staffWait: StoreContract['staffWait'] = {
      ...store.staffWait,
      firstUnanswered: async (conversationId, since) => {
        const line = await store.staffWait.firstUnanswered(conversationId, since);
        await arrive();
        return line;
      },
    };
    return { ...store, staffWait };
  };
}

/**
 * A meeting point of `n` parties: the first arrival waits until `n` have arrived, or until some
 * session of the database waits on a lock (another party is blocked behind this one's), or until
 * `alongside` (started at the first arrival) ends. Later arrivals go on at once.
 */
function meeting(n: number, observer: pg.Pool, alongside?: () => Promise<unknown>) {
  let arrived = 0;
  let closed = false;
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  const lockWait = async (): Promise<void> => {
    while (!closed) {
      const r = await observer.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
      if ((r.rows[0] as { n: number }).n > 0) return;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  };
  return {
    async arrive(): Promise<void> {
      arrived++;
      if (arrived >= n) open();
      if (arrived > 1) return;
      const side = alongside?.();
      await Promise.race([opened, lockWait(), ...(side ? [side] : [])]);
    },
    close(): void {
      closed = true;
    },
  };
}
