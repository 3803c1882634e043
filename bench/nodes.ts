import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { startPostgres, postgresSkipReason, type PgServer } from '../test/helpers/postgres.ts';
import { databasePath, secretKeyPath } from '../src/main/store/data-dir.ts';
import { migratePg } from '../src/main/store/pg/migrate.ts';
import { cliOk as cli, fmt, runWrk, signedBodies, startCountingReceiver, startTarget, type Target, type WrkResult } from './lib.ts';
import { knowledgeBase, kbQuestion } from './kb-data.ts';
import { loadAverage } from './ingest.ts';
import { postgresCpuByProcess, postgresCpuSeconds, processCpuSeconds } from './proc-cpu.ts';

/**
 * bench/nodes (issue 30): ingest through (1) SQLite, one node; (2) PostgreSQL, one node; (3)
 * PostgreSQL, two nodes, on this machine, with the floor (bench/floor) for scale, all in one run.
 * One wrk process per level; its threads are dealt round-robin over the setup's nodes
 * (bench/wrk/nodes.lua). Bodies as bench/ingest's auto_dialog ones; replies delivered to a local
 * receiver. Per level: CPU seconds of each node process and of the PostgreSQL cluster (from /proc)
 * over the level and the drain of its replies, per message stored. See bench/README.md.
 */
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 6);
const REPEAT = Number(process.env['BENCH_REPEAT'] ?? 2);
const LEVELS = (process.env['BENCH_LEVELS'] ?? '10,100').split(',').map(Number);
// Two threads, so the two-node setup has one per node; every setup and the floor get the same.
const THREADS = Number(process.env['BENCH_WRK_THREADS'] ?? 2);
const SENDERS = Number(process.env['BENCH_SENDERS'] ?? 20_000);
const KB_ENTRIES = Number(process.env['BENCH_KB'] ?? 1000);
const POOL = Number(process.env['BENCH_POOL'] ?? 6000 * SECONDS);
const FLOOR_SECONDS = Number(process.env['BENCH_FLOOR_SECONDS'] ?? Math.max(3, Math.round(SECONDS / 2)));
const WARMUP_SECONDS = 2;
// BENCH_PG_STATEMENTS=1: pg_stat_statements on, and its costliest statements printed at the end.
const STATEMENTS = process.env['BENCH_PG_STATEMENTS'] === '1';
// BENCH_PG_DROP_COUNTERS=1 (a diagnosis, not the product): without the triggers that add every
// request and reply to one shared counter row (stats_minutes, request_log_rows), to weigh them.
const DROP_COUNTERS = process.env['BENCH_PG_DROP_COUNTERS'] === '1';

interface Setup {
  name: string;
  nodes: Target[];
  /** The PostgreSQL cluster's data folder, for its CPU time; null for SQLite. */
  pgData: string | null;
  /** Messages awaiting their reply plus deliveries pending. */
  pending(): Promise<number>;
  /** auto_dialog customer messages stored, and how their replies were settled. */
  check(): Promise<{ stored: number; outcomes: string }>;
}

interface Sample { rps: number; p50: number; p99: number; accepted: number; errors: number; repliesPerSecond: number; replyShare: number; nodeMs: number[]; pgMs: number; drainSeconds: number; cores: number; load: number }

export async function runNodes(): Promise<string> {
  const skip = postgresSkipReason();
  if (skip) return `## bench/nodes\n\nskipped: ${skip}`;
  if (THREADS % 2 !== 0) throw new Error('BENCH_WRK_THREADS must be even: the two-node setup deals wrk threads to nodes in turn');
  const cleanup: Array<() => Promise<unknown> | unknown> = [];
  try {
    const dir = mkdtempSync(join(tmpdir(), 'sb-bench-nodes-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const receiver = await startCountingReceiver();
    cleanup.push(() => receiver.close());

    // One installation prepared with the CLI as bench/ingest prepares it; the PostgreSQL databases get
    // its client and knowledge base before it serves, so all three setups start alike.
    const prep = join(dir, 'sqlite');
    mkdirSync(prep);
    const unlimited = JSON.stringify({ rateLimit: { perSecond: 1e9, burst: 1e9 } });
    writeFileSync(join(prep, 'config.json'), unlimited);
    const secret = /^secret: (\S+)$/m.exec(cli(prep, 'clients', 'add', 'bench', '--send-url', receiver.sendUrl))?.[1];
    if (!secret) throw new Error('could not add the bench client');
    cli(prep, 'clients', 'set', 'bench', '--quiet-seconds', '1');
    const kb = knowledgeBase(KB_ENTRIES);
    writeFileSync(join(prep, 'kb.json'), JSON.stringify(kb));
    cli(prep, 'kb', 'import', join(prep, 'kb.json'));

    // Durable: a node answers 200 once PostgreSQL committed and flushed, as SQLite's synchronous=FULL commit does.
    const server = await startPostgres({ durable: true });
    cleanup.push(() => server.stop());
    if (STATEMENTS) await enableStatements(server);
    const urls: string[] = [];
    for (const name of ['sb_one', 'sb_two']) {
      const admin = new pg.Client({ connectionString: server.url });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_CTYPE 'C.UTF-8' LC_COLLATE 'C.UTF-8'`);
      await admin.end();
      const url = server.url.replace(/\/postgres$/, `/${name}`);
      await seedPg(databasePath(prep), url, KB_ENTRIES);
      if (DROP_COUNTERS) await dropCounters(url);
      urls.push(url);
    }

    const started: Target[] = [];
    cleanup.push(() => Promise.all(started.map((t) => t.stop())));
    const start = async (args: string[], env?: Record<string, string>): Promise<Target> => {
      const t = await startTarget(args, { env });
      started.push(t);
      return t;
    };
    const floor = await start(['bench/floor/server.ts', join(dir, 'floor.db')], { FLOOR_SECRET: secret, FLOOR_INDEX: 'paced' });

    const sqliteNode = await start(['src/main/headless.ts', '--port', '0', '--console-port', '0', '--data-dir', prep]);
    const sqlite = new DatabaseSync(databasePath(prep), { readOnly: true });
    cleanup.push(() => sqlite.close());
    const setups: Setup[] = [{
      name: 'SQLite, one node',
      nodes: [sqliteNode],
      pgData: null,
      pending: () => Promise.resolve(Number((sqlite.prepare(PENDING).get() as { n: number }).n)),
      check: () => Promise.resolve(settled(sqlite.prepare(OUTCOMES).all() as unknown as Outcome[])),
    }];
    const keyFile = secretKeyPath(prep);
    const pgNode = (name: string, url: string): Promise<Target> => {
      const nodeDir = join(dir, name);
      mkdirSync(nodeDir);
      writeFileSync(join(nodeDir, 'config.json'), unlimited);
      return start(['src/main/headless.ts', '--port', '0', '--console-port', '0', '--data-dir', nodeDir, '--store', url, '--secret-key-file', keyFile]);
    };
    for (const [i, url] of urls.entries()) {
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      cleanup.push(() => db.end());
      const nodes = i === 0 ? [await pgNode('pg-one', url)] : await Promise.all([pgNode('pg-two-a', url), pgNode('pg-two-b', url)]);
      setups.push({
        name: `PostgreSQL, ${nodes.length === 1 ? 'one node' : 'two nodes'}`,
        nodes,
        pgData: server.dataDir,
        pending: async () => Number((await db.query<{ n: string }>(PENDING)).rows[0]!.n),
        check: async () => settled((await db.query<Outcome>(OUTCOMES)).rows),
      });
    }

    const content = (n: number): string => kbQuestion(kb, n);
    const bodies = signedBodies({ dir, clientId: 'bench', secret, senders: SENDERS, content });
    const floorBodies = signedBodies({ dir, clientId: 'bench', secret, senders: SENDERS, content, prefix: 'floor-' });
    const wrk = async (nodes: Target[], c: number, file: string, seconds: number): Promise<WrkResult> => {
      const hosts = nodes.map((n) => new URL(n.endpoint).host).join(',');
      const r = await runWrk(nodes[0]!.endpoint, c, file, { seconds, threads: THREADS, script: 'bench/wrk/nodes.lua', env: { BODIES_LUA: join(import.meta.dirname, 'wrk/bodies.lua'), NODES: hosts } });
      rmSync(file, { force: true });
      return r;
    };

    const floorSamples = new Map<number, Array<WrkResult & { cpuMs: number }>>();
    const measureFloor = async (): Promise<void> => {
      for (const c of LEVELS) {
        const file = floorBodies.write('auto_dialog', 9000 * FLOOR_SECONDS);
        const cpu0 = processCpuSeconds(floor.child.pid);
        const r = await wrk([floor], c, file, FLOOR_SECONDS);
        const cpuMs = ((processCpuSeconds(floor.child.pid) - cpu0) * 1000) / (r.requests - r.non2xx);
        floorSamples.set(c, [...(floorSamples.get(c) ?? []), { ...r, cpuMs }]);
      }
    };

    const level = async (setup: Setup, c: number, seconds: number): Promise<Sample> => {
      const file = bodies.write('auto_dialog', POOL); // signed before the clock starts
      const load = loadAverage();
      const delivered0 = receiver.delivered();
      const node0 = setup.nodes.map((n) => processCpuSeconds(n.child.pid));
      const pg0 = setup.pgData ? postgresCpuSeconds(setup.pgData) : NaN;
      const t0 = performance.now();
      const r = await wrk(setup.nodes, c, file, seconds);
      const drain0 = performance.now();
      await drain(setup);
      const wall = (performance.now() - t0) / 1000;
      const accepted = r.requests - r.non2xx;
      const nodeCpu = setup.nodes.map((n, i) => processCpuSeconds(n.child.pid) - node0[i]!);
      const pgCpu = setup.pgData ? postgresCpuSeconds(setup.pgData) - pg0 : NaN;
      const delivered = receiver.delivered() - delivered0;
      return {
        rps: r.rps, p50: r.p50, p99: r.p99, accepted, errors: r.non2xx + r.socketErrors + r.wraps,
        repliesPerSecond: delivered / wall, replyShare: delivered / accepted,
        nodeMs: nodeCpu.map((s) => (s * 1000) / accepted), pgMs: (pgCpu * 1000) / accepted,
        drainSeconds: (performance.now() - drain0) / 1000,
        cores: (nodeCpu.reduce((a, b) => a + b, 0) + (Number.isNaN(pgCpu) ? 0 : pgCpu)) / wall,
        load,
      };
    };

    const samples = new Map<string, Sample[]>();
    const accepted = new Map<string, number>();
    for (const setup of setups) {
      await level(setup, 10, WARMUP_SECONDS); // JIT and caches warm; not counted
      accepted.set(setup.name, 0);
    }
    for (let round = 0; round < REPEAT; round++) {
      await measureFloor();
      // Setups in turn, reversed every other round, so the machine's drift weighs on each alike.
      for (const setup of round % 2 === 0 ? setups : [...setups].reverse()) {
        for (const c of LEVELS) {
          const s = await level(setup, c, SECONDS);
          samples.set(`${setup.name}|${c}`, [...(samples.get(`${setup.name}|${c}`) ?? []), s]);
          accepted.set(setup.name, accepted.get(setup.name)! + s.accepted);
        }
      }
    }
    await measureFloor();

    const checks: string[] = [];
    for (const setup of setups) {
      const { stored, outcomes } = await setup.check();
      // The warm-up's messages are stored too: stored ≥ accepted over the measured levels.
      checks.push(`${setup.name}: accepted ${fmt(accepted.get(setup.name)!)} in the measured levels, auto_dialog messages stored ${fmt(stored)} (warm-up included); replies: ${outcomes}`);
    }
    const statements = STATEMENTS ? [...(await topStatements(server.url)), '', ...postgresCpuByProcess(server.dataDir).map((p) => `- ${p.title}: ${fmt(p.seconds, 2)} s CPU`)] : [];
    return [report(setups, samples, floorSamples, checks), ...statements].join('\n');
  } finally {
    for (const step of cleanup.reverse()) {
      try {
        await step();
      } catch (error) {
        console.error(`bench/nodes cleanup: ${(error as Error).message}`);
      }
    }
  }
}

/**
 * The PostgreSQL schema, and the rows the CLI wrote on SQLite (the client, its sealed secret, the
 * knowledge base) copied as they are: what `store copy` does for these tables. Not `store copy`
 * itself: at 879a729 it refuses every target ("table replay_signatures is on PostgreSQL only").
 */
async function seedPg(sqlitePath: string, url: string, kbEntries: number): Promise<void> {
  const source = new DatabaseSync(sqlitePath, { readOnly: true });
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    await migratePg(db);
    await db.query('BEGIN');
    for (const table of ['clients', 'client_secrets', 'kb_entries']) {
      const rows = source.prepare(`SELECT * FROM ${table}`).all();
      for (let i = 0; i < rows.length; i += 200) {
        const batch = rows.slice(i, i + 200);
        const columns = Object.keys(batch[0]!);
        const values = batch.map((_, r) => `(${columns.map((__, c) => `$${r * columns.length + c + 1}`).join(', ')})`).join(', ');
        await db.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values}`, batch.flatMap((row) => columns.map((c) => row[c])));
      }
    }
    await db.query('COMMIT');
    const kb = Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM kb_entries')).rows[0]!.n);
    if (kb !== kbEntries) throw new Error(`${url}: ${kb} knowledge-base entries copied, expected ${kbEntries}`);
  } finally {
    source.close();
    await db.end();
  }
}

const PENDING = "SELECT (SELECT count(*) FROM messages WHERE reply_outcome = 'pending') + (SELECT count(*) FROM deliveries WHERE state = 'pending') AS n";
const OUTCOMES = "SELECT coalesce(reply_outcome, 'none') AS outcome, count(*) AS n FROM messages WHERE event_type = 'auto_dialog' AND role = 'customer' GROUP BY 1 ORDER BY 2 DESC";
interface Outcome { outcome: string; n: number | string }
const settled = (rows: Outcome[]): { stored: number; outcomes: string } => ({
  stored: rows.reduce((a, r) => a + Number(r.n), 0),
  outcomes: rows.map((r) => `${r.outcome} ${fmt(Number(r.n))}`).join(', '),
});

/** Until no message awaits its reply and no delivery is pending (at most 120 s). */
async function drain(setup: Setup): Promise<void> {
  const started = performance.now();
  while ((await setup.pending()) > 0) {
    if (performance.now() - started > 120_000) throw new Error(`${setup.name}: replies still pending 120 s after the level`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const spread = (xs: number[], digits = 0): string =>
  xs.some(Number.isNaN) ? '–' : `${fmt(median(xs), digits)} (${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)})`;

function report(setups: Setup[], samples: Map<string, Sample[]>, floor: Map<number, Array<WrkResult & { cpuMs: number }>>, checks: string[]): string {
  const rows: string[] = [];
  for (const c of LEVELS) {
    const f = floor.get(c) ?? [];
    rows.push(`| floor (bench/floor, SQLite) | ${c} | ${spread(f.map((x) => x.rps))} | ${spread(f.map((x) => x.p50), 2)} | ${spread(f.map((x) => x.p99), 1)} | – | – | ${spread(f.map((x) => x.cpuMs), 3)} | – | – | – | ${fmt(f.reduce((a, x) => a + x.non2xx + x.socketErrors, 0))} |`);
    for (const setup of setups) {
      const s = samples.get(`${setup.name}|${c}`) ?? [];
      const perNode = setup.nodes.length > 1 ? ` = ${setup.nodes.map((_, i) => fmt(median(s.map((x) => x.nodeMs[i]!)), 3)).join(' + ')}` : '';
      rows.push(`| ${setup.name} | ${c} | ${spread(s.map((x) => x.rps))} | ${spread(s.map((x) => x.p50), 2)} | ${spread(s.map((x) => x.p99), 1)} | ${spread(s.map((x) => x.repliesPerSecond))} | ${spread(s.map((x) => x.replyShare), 2)} | ${spread(s.map((x) => x.nodeMs.reduce((a, b) => a + b, 0)), 3)}${perNode} | ${spread(s.map((x) => x.pgMs), 3)} | ${spread(s.map((x) => x.cores), 2)} | ${spread(s.map((x) => x.drainSeconds), 1)} | ${fmt(s.reduce((a, x) => a + x.errors, 0))} |`);
    }
  }
  const loads = [...samples.values()].flat().map((s) => s.load);
  // On paper: with each node on cores of its own and the database on its own, a core of nodes
  // takes 1000 / (node ms per message) messages a second, a core of PostgreSQL 1000 / (its ms).
  const paper = setups.filter((s) => s.pgData).map((setup) => {
    const s = samples.get(`${setup.name}|${Math.max(...LEVELS)}`) ?? [];
    const node = median(s.map((x) => x.nodeMs.reduce((a, b) => a + b, 0)));
    const db = median(s.map((x) => x.pgMs));
    return `${setup.name} at ${Math.max(...LEVELS)} connections: ${fmt(node, 3)} ms node + ${fmt(db, 3)} ms PostgreSQL CPU per message, so about ${fmt(1000 / node)} messages/s per node core and ${fmt(1000 / db)} per PostgreSQL core`;
  });
  return [
    `## bench/nodes: ${SECONDS} s per level, ${REPEAT} runs each, median (min–max); wrk -t${THREADS}, threads dealt round-robin over the nodes (bench/wrk/nodes.lua); unique pre-signed auto_dialog bodies, ${fmt(SENDERS)} senders, every message a rephrased question of the ${fmt(KB_ENTRIES)}-entry knowledge base, quiet period 1 s, replies delivered to a local receiver`,
    `${DROP_COUNTERS ? '**PostgreSQL counter triggers dropped (BENCH_PG_DROP_COUNTERS=1): a diagnosis, not the product.** ' : ''}SQLite synchronous=FULL; PostgreSQL durable (fsync, synchronous_commit and full_page_writes on: acknowledged = committed and flushed), its default settings otherwise, on this machine; nodes' pools at their default (10 connections). Floor: bench/floor/server.ts (index "paced"), ${FLOOR_SECONDS} s at each level before every round and once after the last. Load average (1 min) at level starts: ${fmt(Math.min(...loads), 1)}–${fmt(Math.max(...loads), 1)} on ${availableParallelism()} cores shared with other work.`,
    'Replies/s: replies the receiver got from the level\'s start until nothing was pending, over that time. CPU per message: user + system CPU (/proc) of the node processes (all threads) and of the PostgreSQL cluster (postmaster, backends, background processes) over the level and its drain, per message accepted. Cores busy: that CPU over the same wall time.',
    '',
    '| setup | connections | req/s | p50 ms | p99 ms | replies delivered/s | replies ÷ accepted | node CPU ms/message | PostgreSQL CPU ms/message | cores busy | drain s | non-2xx + socket errors + pool wraps |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    ...paper.map((p) => `- ${p}`),
    ...checks.map((c) => `- ${c}`),
  ].join('\n');
}

async function enableStatements(server: PgServer): Promise<void> {
  const sql = async (statements: string[]): Promise<void> => {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    try {
      for (const statement of statements) await admin.query(statement);
    } finally {
      await admin.end();
    }
  };
  await sql(["ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"]);
  await server.pause();
  await server.resume();
  // Known only once the library is loaded; planning time counts too (statements are not prepared).
  await sql(['CREATE EXTENSION pg_stat_statements', 'ALTER SYSTEM SET pg_stat_statements.track_planning = on', 'SELECT pg_reload_conf()']);
}

/** The statements that took PostgreSQL the most time over the whole run, every database. */
async function topStatements(url: string): Promise<string[]> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const rows = (await admin.query<{ calls: string; total: number; mean: number; rows: string; query: string }>(
      'SELECT calls, total_exec_time + total_plan_time AS total, mean_exec_time + mean_plan_time AS mean, rows, query FROM pg_stat_statements ORDER BY 2 DESC LIMIT 15',
    )).rows;
    return [
      '',
      '| calls | total ms (plan + execute) | mean ms | rows | statement (pg_stat_statements) |',
      '|---:|---:|---:|---:|---|',
      ...rows.map((r) => `| ${fmt(Number(r.calls))} | ${fmt(r.total)} | ${fmt(r.mean, 3)} | ${fmt(Number(r.rows))} | ${r.query.replace(/\s+/g, ' ').replaceAll('|', '\\|').slice(0, 160)} |`),
    ];
  } finally {
    await admin.end();
  }
}

async function dropCounters(url: string): Promise<void> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    await db.query('DROP TRIGGER stats_request_log_insert ON request_log; DROP TRIGGER request_log_rows_insert ON request_log; DROP TRIGGER stats_replies_insert ON replies');
  } finally {
    await db.end();
  }
}

