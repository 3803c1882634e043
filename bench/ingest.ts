import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { startTarget, startCountingReceiver, fmt, cliOk as cli, runWrk, scrape, signedBodies, type WrkResult } from './lib.ts';
import { knowledgeBase, kbQuestion } from './kb-data.ts';

/**
 * bench/ingest: signed requests driven by wrk (a C load generator, so the client costs little CPU)
 * against Switchboard, the floor (bench/floor: a server that only authenticates and stores) and a
 * bare node:http server in the same run; issue 26's targets are stated against the floor. Bodies are unique and signed
 * before the clock starts; 20,000 senders; a 1,000-entry knowledge base; auto_dialog replies are
 * really delivered to a local receiver during the run. See bench/README.md.
 */
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 8);
const LEVELS = (process.env['BENCH_LEVELS'] ?? '10,100').split(',').map(Number);
const THREADS = Number(process.env['BENCH_WRK_THREADS'] ?? 1);
const SENDERS = Number(process.env['BENCH_SENDERS'] ?? 20_000);
const KB_ENTRIES = Number(process.env['BENCH_KB'] ?? 1000);
// Bodies per Switchboard level; a thread that runs out starts over, and the table says so.
const POOL = Number(process.env['BENCH_POOL'] ?? 6000 * SECONDS);
// The bare server's run right before each level (at least 3 s).
const BARE_SECONDS = Number(process.env['BENCH_BARE_SECONDS'] ?? Math.max(3, Math.round(SECONDS / 2)));
// The floor's runs, one right before and one right after each level (at least 3 s each).
const FLOOR_SECONDS = Number(process.env['BENCH_FLOOR_SECONDS'] ?? Math.max(3, Math.round(SECONDS / 2)));
// The floor's search index: paced (Switchboard's merge steps, as Switchboard indexes), automerge or none.
const FLOOR_INDEX = process.env['BENCH_FLOOR_INDEX'] ?? 'paced';
const ALL_EVENT_TYPES = ['auto_dialog', 'website_dialog'] as const;
type EventType = (typeof ALL_EVENT_TYPES)[number];
// BENCH_EVENTS=website_dialog runs one scenario's levels (a CPU profile of one scenario alone).
const EVENT_TYPES = (process.env['BENCH_EVENTS']?.split(',') ?? ALL_EVENT_TYPES).map((e) => {
  const known = ALL_EVENT_TYPES.find((k) => k === e);
  if (!known) throw new Error(`BENCH_EVENTS: unknown event type "${e}" (${ALL_EVENT_TYPES.join(', ')})`);
  return known;
});

export async function runIngest(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-bench-ingest-'));
  const receiver = await startCountingReceiver();
  const { sendUrl } = receiver;

  // The benchmark measures the pipeline, not the per-client rate limit (100/s by default).
  writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ rateLimit: { perSecond: 1e9, burst: 1e9 } }));
  const secret = /^secret: (\S+)$/m.exec(cli(dataDir, 'clients', 'add', 'bench', '--send-url', sendUrl))?.[1];
  if (!secret) throw new Error('could not add the bench client');
  // Replies fall due one second after a sender's last message, so they are composed and delivered within a level.
  cli(dataDir, 'clients', 'set', 'bench', '--quiet-seconds', '1');
  const kb = knowledgeBase(KB_ENTRIES);
  writeFileSync(join(dataDir, 'kb.json'), JSON.stringify(kb));
  cli(dataDir, 'kb', 'import', join(dataDir, 'kb.json'));

  // Every message asks a knowledge-base question in other words (no small talk): an integrator's
  // auto_dialog traffic, every message answered from the knowledge base (issue 26).
  const content = (n: number): string => kbQuestion(kb, n);
  const bodies = signedBodies({ dir: dataDir, clientId: 'bench', secret, senders: SENDERS, content });
  const writeBodies = (eventType: EventType, count: number): string => bodies.write(eventType, count);
  // The floor's own bodies (same client, secret, senders and texts; their own msg_ids), fresh for each of its runs.
  const floorBodies = signedBodies({ dir: dataDir, clientId: 'bench', secret, senders: SENDERS, content, prefix: 'floor-' });

  // The bare server ignores the body, so a smaller pool sent round and round costs it nothing.
  // It is measured once, right before each level: a cheap check of the machine's state.
  const bare = await startTarget(['bench/bare-server.ts']);
  const bareFile = writeBodies('auto_dialog', 20_000);
  const bareRun = (c: number): Promise<WrkResult> => runWrk(bare.endpoint, c, bareFile, { seconds: BARE_SECONDS, threads: THREADS });

  // The floor (bench/floor/server.ts): authenticates and stores question and answer, nothing else,
  // with the search index merged as Switchboard merges it. The targets are stated against it
  // (issue 26). It runs through the whole bench on one database, as Switchboard does, and is
  // measured right before and right after each level (this machine's capacity drifts by a factor
  // of two within the hour); its figures are the mean of the two.
  const floor = await startTarget(['bench/floor/server.ts', join(dataDir, 'floor.db')], { env: { FLOOR_SECRET: secret, FLOOR_INDEX } });
  const floorRun = (eventType: EventType, c: number): Promise<WrkResult> =>
    runWrk(floor.endpoint, c, floorBodies.write(eventType, 9000 * FLOOR_SECONDS), { seconds: FLOOR_SECONDS, threads: THREADS });

  // BENCH_CPU_PROF=DIR: one .cpuprofile per thread of the server (main, engine, writer); see bench/cpu-profile-summary.ts.
  const prof = process.env['BENCH_CPU_PROF'];
  const sb = await startTarget([...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []), 'src/main/headless.ts', '--port', '0', '--console-port', '0', '--data-dir', dataDir]);
  const rows: string[] = [];
  const levels: Level[] = [];
  const accepted = new Map<EventType, number>();
  let floorErrors = 0;
  for (const eventType of EVENT_TYPES) {
    for (const c of LEVELS) {
      const file = writeBodies(eventType, POOL); // signed before the clock starts
      const base = await bareRun(c);
      const floorBefore = await floorRun(eventType, c);
      const m0 = await scrape(sb.endpoint); // resets the event-loop delay window
      const deliveredBefore = receiver.delivered();
      const cpu0 = cpuTimes();
      const load = loadAverage();
      const r = await runWrk(sb.endpoint, c, file, { seconds: SECONDS, threads: THREADS });
      const stolen = stealShare(cpu0, cpuTimes());
      const m = await scrape(sb.endpoint);
      accepted.set(eventType, (accepted.get(eventType) ?? 0) + r.requests - r.non2xx);
      const loopP99 = (m.get('switchboard_event_loop_delay_p99_seconds') ?? NaN) * 1000;
      const loop = `${fmt(loopP99, 1)} / ${fmt((m.get('switchboard_event_loop_delay_max_seconds') ?? NaN) * 1000, 0)}`;
      const commits = slowCommits(m0, m);
      const replies = eventType === 'auto_dialog' ? fmt(receiver.delivered() - deliveredBefore) : '–';
      // Replies still to compose or deliver would run during the next level and be counted there:
      // the floor's second run and the next level start only once none is left.
      const drained = await drainBacklog(join(dataDir, 'switchboard.db'));
      const floorAfter = await floorRun(eventType, c);
      floorErrors += floorBefore.non2xx + floorBefore.socketErrors + floorAfter.non2xx + floorAfter.socketErrors;
      const fl = { rps: (floorBefore.rps + floorAfter.rps) / 2, p99: (floorBefore.p99 + floorAfter.p99) / 2 };
      levels.push({ eventType, c, rps: r.rps, p99: r.p99, loopP99, errors: r.non2xx + r.socketErrors, floorRps: fl.rps, floorP99: fl.p99, load });
      rows.push(`| ${eventType} | ${c} | ${fmt(load, 2)} | ${fmt(base.rps)} | ${fmt(fl.rps)} (${fmt(floorBefore.rps)} / ${fmt(floorAfter.rps)}) | ${fmt(r.rps)} | ${fmt(r.rps / fl.rps, 3)} | ${fmt(r.rps / base.rps, 3)} | ${fmt(floorBefore.p50, 2)} / ${fmt(fl.p99, 2)} (${fmt(floorBefore.p99, 1)} / ${fmt(floorAfter.p99, 1)}) | ${fmt(r.p50, 2)} / ${fmt(r.p99, 2)} | ${loop} | ${commits} | ${stolen === null ? '–' : fmt(stolen, 1)} | ${replies} | ${fmt(drained.left)} / ${drained.finished ? `${fmt(drained.seconds, 1)} s` : `still ${fmt(drained.stillPending)} after ${fmt(drained.seconds, 0)} s`} | ${r.non2xx + r.socketErrors}${r.wraps ? ` (${r.wraps} pool wraps)` : ''} |`);
    }
  }
  await bare.stop();
  await floor.stop();
  await sb.stop();
  receiver.close();

  const db = new DatabaseSync(join(dataDir, 'switchboard.db'), { readOnly: true });
  const check = EVENT_TYPES.map((et) => {
    const stored = (db.prepare("SELECT count(*) AS n FROM messages WHERE event_type = ? AND role = 'customer'").get(et) as { n: number }).n;
    const ok = accepted.get(et) ?? 0;
    return `${et}: accepted ${fmt(ok)}, stored ${fmt(stored)}${stored >= ok ? '' : ' LOST MESSAGES'}`;
  });
  // What became of the auto_dialog messages: with every message a knowledge-base question, all are answered (none handed off).
  const outcomes = EVENT_TYPES.includes('auto_dialog')
    ? (db.prepare("SELECT coalesce(reply_outcome, 'none') AS outcome, count(*) AS n FROM messages WHERE event_type = 'auto_dialog' AND role = 'customer' GROUP BY 1 ORDER BY 2 DESC").all() as Array<{ outcome: string; n: number }>)
        .map((o) => `${o.outcome} ${fmt(o.n)}`)
        .join(', ')
    : null;
  db.close();
  rmSync(dataDir, { recursive: true, force: true });

  return [
    `bench/ingest: wrk -t${THREADS}, ${SECONDS} s per level, unique pre-signed bodies, ${fmt(SENDERS)} senders, every message a rephrased question of the ${fmt(KB_ENTRIES)}-entry knowledge base, quiet period 1 s, replies delivered to a local receiver answering 200, synchronous=FULL`,
    `floor: bench/floor/server.ts (search index "${FLOOR_INDEX}"), ${FLOOR_SECONDS} s runs right before and right after each level (the second once the level's replies have drained), figures the mean of the two (each in brackets); bare: node:http, ${BARE_SECONDS} s right before the level; load: the 1-minute load average as the level starts; CPU stolen: the share of the machine's CPU time the hypervisor took during the level`,
    '',
    targetsTable(levels, floorErrors),
    '',
    '| event type | connections | load | bare req/s | floor req/s (before / after) | switchboard req/s | ÷ floor | ÷ bare | floor p50 / p99 ms (p99 before / after) | switchboard p50 / p99 ms | event-loop delay p99 / max ms | writer commits: all / over 10 ms / over 25 ms | CPU stolen % | replies delivered | messages awaiting a reply + deliveries pending at the end / done after | non-2xx + socket errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    check.join('; ') + (outcomes ? `; auto_dialog replies: ${outcomes}` : ''),
  ].join('\n');
}

interface Level { eventType: EventType; c: number; rps: number; p99: number; loopP99: number; errors: number; floorRps: number; floorP99: number; load: number }

/**
 * Issue 26's targets, each against the floor measured in the same run: p99 at 10 connections
 * within 2× the floor's (auto_dialog and website_dialog), throughput at 100 connections at least
 * 0.5× the floor's, no non-2xx, and the main thread's event-loop delay p99 under 20 ms at every level.
 */
function targetsTable(levels: Level[], floorErrors: number): string {
  const verdict = (ok: boolean): string => (ok ? 'met' : '**not met**');
  const out = ['| target | switchboard | floor | ratio | status |', '|---|---:|---:|---:|---|'];
  for (const eventType of EVENT_TYPES) {
    const at10 = levels.find((l) => l.eventType === eventType && l.c === 10);
    out.push(at10
      ? `| ${eventType}: p99 at 10 connections ≤ 2× the floor's | ${fmt(at10.p99, 1)} ms | ${fmt(at10.floorP99, 1)} ms | ${fmt(at10.p99 / at10.floorP99, 2)}× | ${verdict(at10.p99 <= 2 * at10.floorP99)} |`
      : `| ${eventType}: p99 at 10 connections ≤ 2× the floor's | – | – | – | not measured (BENCH_LEVELS) |`);
  }
  for (const eventType of EVENT_TYPES) {
    const at100 = levels.find((l) => l.eventType === eventType && l.c === 100);
    out.push(at100
      ? `| ${eventType}: req/s at 100 connections ≥ 0.5× the floor's | ${fmt(at100.rps)} | ${fmt(at100.floorRps)} | ${fmt(at100.rps / at100.floorRps, 2)}× | ${verdict(at100.rps >= 0.5 * at100.floorRps)} |`
      : `| ${eventType}: req/s at 100 connections ≥ 0.5× the floor's | – | – | – | not measured (BENCH_LEVELS) |`);
  }
  const errors = levels.reduce((a, l) => a + l.errors, 0);
  out.push(`| no non-2xx (or socket errors), all levels | ${fmt(errors)} | ${fmt(floorErrors)} | – | ${verdict(errors === 0)} |`);
  for (const l of levels) {
    out.push(`| event-loop delay p99 < 20 ms, ${l.eventType} at ${l.c} connections | ${fmt(l.loopP99, 1)} ms | – | – | ${verdict(l.loopP99 < 20)} |`);
  }
  return out.join('\n');
}

/** The 1-minute load average (Linux): other work on this 2-core machine shows in every figure. */
export function loadAverage(): number {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return NaN;
  }
}

/** The machine's CPU times from /proc/stat (Linux): all of them, and those stolen by the hypervisor. */
export function cpuTimes(): { total: number; steal: number } | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already counted in user).
    const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
    return { total, steal: fields[7] ?? 0 };
  } catch {
    return null;
  }
}

export function stealShare(a: ReturnType<typeof cpuTimes>, b: ReturnType<typeof cpuTimes>): number | null {
  if (!a || !b || b.total <= a.total) return null;
  return ((b.steal - a.steal) / (b.total - a.total)) * 100;
}

/**
 * Waits until no message awaits its reply and no delivery is pending: what a level left undone
 * (replies to compose, deliveries to send), and how long the server took to finish it.
 */
export async function drainBacklog(databasePath: string): Promise<{ left: number; seconds: number; finished: boolean; stillPending: number }> {
  const db = new DatabaseSync(databasePath, { readOnly: true });
  const backlog = db.prepare(
    "SELECT (SELECT count(*) FROM messages WHERE reply_outcome = 'pending') + (SELECT count(*) FROM deliveries WHERE state = 'pending') AS n",
  );
  const count = (): number => (backlog.get() as { n: number }).n;
  const started = performance.now();
  const left = count();
  let pending = left;
  while (pending > 0 && performance.now() - started < 120_000) {
    await new Promise((r) => setTimeout(r, 100));
    pending = count();
  }
  db.close();
  return { left, seconds: left === 0 ? 0 : (performance.now() - started) / 1000, finished: pending === 0, stillPending: pending };
}

/**
 * The writer's COMMITs during a level, from the /metrics histogram scraped before and after it:
 * all, over 10 ms and over 25 ms. A COMMIT that checkpoints (once the WAL holds 8,192 frames) copies
 * them into the database file and fsyncs it while its batch waits; these counts say how often a level met one.
 */
function slowCommits(before: Map<string, number>, after: Map<string, number>): string {
  const name = 'switchboard_db_commit_duration_seconds';
  const delta = (series: string): number => (after.get(series) ?? NaN) - (before.get(series) ?? NaN);
  const all = delta(`${name}_count`);
  return `${fmt(all)} / ${fmt(all - delta(`${name}_bucket{le="0.01"}`))} / ${fmt(all - delta(`${name}_bucket{le="0.025"}`))}`;
}
