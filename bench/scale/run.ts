import { readFileSync, rmSync, statSync, existsSync, mkdtempSync, readdirSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { spawnServe, type ServeProcess } from '../../test/helpers/processes.ts';
import { cliOk, fmt, percentile, runWrk, signedBodies, startCountingReceiver, startTarget, type WrkResult } from '../lib.ts';
import { knowledgeBase } from '../kb-data.ts';
import { scaleStore, copyStore, prepareDataDir, SCALE_CLIENT } from './build.ts';
import { FULL_SHAPE, scaleText, type ScaleShape } from './scenario.ts';
import { consoleApi, listApiOf, loadList, replayHour, CONSOLE_ARRAY_LIMIT, PAGE_LIMIT, type ConsoleApi } from './console-driver.ts';

/**
 * bench/scale (issues 10 and 12): a store of 1,000,000 transcript entries (customer messages and
 * the replies to them) in 50,000 conversations, built once by the bulk loader (loader.ts) and
 * cached under os.tmpdir(); each run serves a copy with the real server process and measures cold
 * start, the console's queries over its HTTP API, the main process's RSS after an hour of console
 * use, the database size, and ingest on this store against an empty one in the same run.
 *   npm run bench -- scale        node bench/scale/run.ts
 * Environment: BENCH_SCALE_ENTRIES (1000000), BENCH_SCALE_CONVERSATIONS (50000),
 * BENCH_SCALE_USE_SECONDS (cap on the hour-of-use replay, 180), BENCH_SECONDS (wrk, 8),
 * BENCH_SCALE_CONNECTIONS (wrk, 10), BENCH_SCALE_CACHE (cache folder, os.tmpdir()),
 * BENCH_SCALE_ONLY=ingest (only the ingest rows: skips cold start, console timings and the hour of
 * use) or BENCH_SCALE_ONLY=console (everything but ingest), BENCH_SCALE_EVENTS (ingest event types, comma-separated: auto_dialog,website_dialog),
 * BENCH_CPU_PROF=DIR (one .cpuprofile per server thread, under DIR/empty and DIR/full; see
 * bench/cpu-profile-summary.ts).
 */
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 8);
const CONNECTIONS = Number(process.env['BENCH_SCALE_CONNECTIONS'] ?? 10);
const USE_CAP_MS = Number(process.env['BENCH_SCALE_USE_SECONDS'] ?? 180) * 1000;
const RUNS = 7;
const ONLY = process.env['BENCH_SCALE_ONLY'];
if (ONLY !== undefined && ONLY !== 'ingest' && ONLY !== 'console') throw new Error(`BENCH_SCALE_ONLY: "ingest" or "console", not "${ONLY}"`);
const EVENTS = (process.env['BENCH_SCALE_EVENTS'] ?? 'auto_dialog,website_dialog').split(',').map((e) => {
  if (e !== 'auto_dialog' && e !== 'website_dialog') throw new Error(`BENCH_SCALE_EVENTS: unknown event type "${e}"`);
  return e;
});
const PROF = process.env['BENCH_CPU_PROF'];
const MB = 2 ** 20;

const log = (line: string): void => void process.stderr.write(`bench/scale: ${line}\n`);

function shapeFromEnv(): ScaleShape {
  const entries = Number(process.env['BENCH_SCALE_ENTRIES'] ?? FULL_SHAPE.entries);
  const conversations = Number(process.env['BENCH_SCALE_CONVERSATIONS'] ?? FULL_SHAPE.conversations);
  return { ...FULL_SHAPE, entries, conversations, longConversation: Math.min(FULL_SHAPE.longConversation, Math.floor(entries / 10)) };
}

function rssMb(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

function fileMb(path: string): number {
  return existsSync(path) ? statSync(path).size / MB : 0;
}

async function timed(runs: number, f: () => Promise<number>): Promise<{ p50: number; p95: number }> {
  await f(); // warm-up: the first call after start reads cold pages
  const t: number[] = [];
  for (let i = 0; i < runs; i++) t.push(await f());
  const sorted = Float64Array.from(t).sort();
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
}

async function stop(s: ServeProcess): Promise<void> {
  s.child.kill('SIGTERM');
  await s.exit();
}

interface StoreFacts {
  long: string;
  longEntries: number;
  typical: string;
  typicalEntries: number;
  sample: string[];
  lastAt: number;
  counts: Record<string, number>;
}

function storeFacts(dbPath: string): StoreFacts {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  const count = (sql: string): number => (db.prepare(sql).get() as { n: number }).n;
  const counts = {
    conversations: count('SELECT count(*) AS n FROM conversations'),
    messages: count('SELECT count(*) AS n FROM messages'),
    replies: count('SELECT count(*) AS n FROM replies'),
    deliveries: count('SELECT count(*) AS n FROM deliveries'),
    attempts: count('SELECT count(*) AS n FROM delivery_attempts'),
    needsHuman: count('SELECT count(*) AS n FROM conversations WHERE needs_human = 1'),
    idempotency: count('SELECT count(*) AS n FROM idempotency'),
    requestLog: count('SELECT count(*) AS n FROM request_log'),
    senders: count('SELECT count(DISTINCT customer_id) AS n FROM conversations'),
  };
  const long = db.prepare('SELECT id, message_count AS n FROM conversations ORDER BY message_count DESC LIMIT 1').get() as { id: string; n: number };
  const typical = db.prepare('SELECT id, message_count AS n FROM conversations ORDER BY message_count LIMIT 1 OFFSET ?').get(Math.floor(counts.conversations / 2)) as { id: string; n: number };
  const sample = (db.prepare('SELECT id FROM conversations ORDER BY id LIMIT 200').all() as Array<{ id: string }>).map((r) => r.id);
  const lastAt = count('SELECT max(at) AS n FROM request_log');
  db.close();
  return { long: long.id, longEntries: long.n, typical: typical.id, typicalEntries: typical.n, sample, lastAt, counts };
}

async function coldStart(dir: string): Promise<number> {
  const started = performance.now();
  const s = await spawnServe(dir);
  for (;;) {
    const ok = await fetch(`${s.base}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const ms = performance.now() - started;
  await stop(s);
  return ms;
}

type EventType = 'auto_dialog' | 'website_dialog';
interface IngestStore { dir: string; secret: string }
interface Ingested { rps: number; p99: number; errors: number }

/**
 * wrk against the empty and the full store, both served at once (idle between their turns), each
 * warmed up for 2 s, then in the order empty, full, full, empty per event type: a machine getting busier or quieter during
 * the run weighs on both alike. Senders are the store's own customers (cust-0 …): on the full
 * store their histories are loaded with each message.
 */
async function ingest(stores: { empty: IngestStore; full: IngestStore }, kb: Array<{ question: string }>, senders: number): Promise<Record<EventType, { empty: Ingested; full: Ingested }>> {
  const prof = (which: string): string[] => (PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(PROF, which)}`] : []);
  const targets = {
    empty: await startTarget([...prof('empty'), 'src/main/headless.ts', '--port', '0', '--console-port', '0', '--data-dir', stores.empty.dir]),
    full: await startTarget([...prof('full'), 'src/main/headless.ts', '--port', '0', '--console-port', '0', '--data-dir', stores.full.dir]),
  };
  try {
    const bodies = {
      empty: signedBodies({ dir: stores.empty.dir, clientId: SCALE_CLIENT, secret: stores.empty.secret, senders, content: (n) => scaleText(kb, n + 7) }),
      full: signedBodies({ dir: stores.full.dir, clientId: SCALE_CLIENT, secret: stores.full.secret, senders, content: (n) => scaleText(kb, n + 7) }),
    };
    // Warm-up, not counted: the first requests a server answers pay for JIT and its threads' start.
    for (const which of ['empty', 'full'] as const) await runWrk(targets[which].endpoint, CONNECTIONS, bodies[which].write('auto_dialog', 5000 * 2), { seconds: 2, threads: 1 });
    const out = {} as Record<EventType, { empty: Ingested; full: Ingested }>;
    for (const eventType of EVENTS) {
      const runs: Record<'empty' | 'full', WrkResult[]> = { empty: [], full: [] };
      for (const which of ['empty', 'full', 'full', 'empty'] as const) {
        const file = bodies[which].write(eventType, 5000 * SECONDS);
        runs[which].push(await runWrk(targets[which].endpoint, CONNECTIONS, file, { seconds: SECONDS, threads: 1 }));
      }
      const sum = (r: WrkResult[]): Ingested => ({
        rps: r.reduce((a, x) => a + x.rps, 0) / r.length,
        p99: Math.max(...r.map((x) => x.p99)),
        errors: r.reduce((a, x) => a + x.non2xx + x.socketErrors, 0),
      });
      out[eventType] = { empty: sum(runs.empty), full: sum(runs.full) };
    }
    return out;
  } finally {
    await targets.empty.stop();
    await targets.full.stop();
  }
}

/** Cold start, the console's queries and RSS after an hour of console use, on the full store. */
async function measureConsole(dir: string, facts: StoreFacts, statsMinutes: number): Promise<{ rows: string[]; note: string }> {
  const cold: number[] = [];
  for (let i = 0; i < 3; i++) cold.push(await coldStart(dir));
  cold.sort((a, b) => a - b);

  const server = await spawnServe(dir);
  const pid = server.child.pid!;
  const api: ConsoleApi = consoleApi(server.consoleBase, server.consoleToken);
  const rssStart = rssMb(pid);
  const kind = await listApiOf(api);
  // The hour of use first: the RSS target is about what an agent's day does to the process. The
  // timings after it also fetch a long transcript whole, which the console never asks for at once.
  const hourTerms = ['Ripple bath towels waterproof', 'shipping', '申请退款', '退款', 'qzxqzx'];
  const hour = await replayHour(api, kind, { terms: hourTerms, conversations: facts.sample, long: facts.long, statsMinutes, capMs: USE_CAP_MS });
  const rssHour = rssMb(pid);
  const consoleLimit = kind === 'array' ? CONSOLE_ARRAY_LIMIT : PAGE_LIMIT;
  let firstBytes = 0;
  const list = await timed(RUNS, async () => {
    const r = await loadList(api, kind, {}, 1);
    firstBytes = r.first.bytes;
    return r.first.ms;
  });
  const list200 = await timed(RUNS, async () => (await api.call('listConversations', { limit: 200 })).ms);
  const transcript = (id: string, limit: number) => timed(RUNS, async () => (await api.call('getTranscript', { conversationId: id, limit })).ms);
  const longOpen = await transcript(facts.long, 50);
  const longAll = await transcript(facts.long, 10_000);
  const typicalOpen = await transcript(facts.typical, 50);
  const terms = [
    ['rare', 'Ripple bath towels waterproof'],
    ['common', 'shipping'],
    ['CJK', '申请退款'],
    ['2 characters', '退款'],
    ['no match', 'qzxqzx'],
  ] as const;
  const searches: Array<[string, string, { p50: number; p95: number }, number]> = [];
  for (const [label, term] of terms) {
    let hits = 0;
    const t = await timed(RUNS, async () => {
      const r = await api.call('listConversations', { search: term, limit: consoleLimit });
      hits = Array.isArray(r.value) ? r.value.length : ((r.value as { items?: unknown[] }).items?.length ?? 0);
      return r.ms;
    });
    searches.push([label, term, t, hits]);
  }
  const stats = await timed(RUNS, async () => (await api.call('stats', { minutes: statsMinutes })).ms);
  const rssTimings = rssMb(pid);
  await stop(server);

  const ms = (t: { p50: number; p95: number }): string => `${fmt(t.p50, 1)} / ${fmt(t.p95, 1)} ms`;
  const rows = [
    `| cold start: spawn → /healthz 200 (warm page cache), median of 3 | ${fmt(cold[1]!)} ms (${cold.map((x) => fmt(x)).join(', ')}) | < 2,000 ms | ${met(cold[1]! < 2000)} |`,
    `| main-process RSS after start / after ${hour.minutes} min of console use (peak) | ${fmt(rssStart.rss)} / ${fmt(rssHour.rss)} MB (${fmt(rssHour.hwm)}) | < 250 MB | ${met(rssHour.rss < 250)} |`,
    `| main-process RSS after the timings below as well (they fetch the long transcript whole 7 times) | ${fmt(rssTimings.rss)} MB (peak ${fmt(rssTimings.hwm)}) | | |`,
    `| console list, first request as the console makes it (${kind === 'array' ? `limit ${fmt(CONSOLE_ARRAY_LIMIT)}: the whole list` : `page of ${PAGE_LIMIT}`}; ${fmt(firstBytes / MB, 1)} MB), p50 / p95 | ${ms(list)} | < 300 ms | ${met(list.p95 < 300)} |`,
    `| console list, 200 rows | ${ms(list200)} | < 300 ms | ${met(list200.p95 < 300)} |`,
    `| transcript open, long conversation (${fmt(facts.longEntries)} entries, console's 50) | ${ms(longOpen)} | < 200 ms | ${met(longOpen.p95 < 200)} |`,
    `| transcript, long conversation, all entries at once (limit 10,000; the console opens 50, more on request) | ${ms(longAll)} | | |`,
    `| transcript open, typical conversation (${fmt(facts.typicalEntries)} entries) | ${ms(typicalOpen)} | < 200 ms | ${met(typicalOpen.p95 < 200)} |`,
    ...searches.map(([label, term, t, hits]) => `| message search, ${label} term "${term}" (${fmt(hits)} conversations, limit ${fmt(consoleLimit)}) | ${ms(t)} | < 200 ms | ${met(t.p95 < 200)} |`),
    `| dashboard stats, ${statsMinutes} min window (holds the store's last hour) | ${ms(stats)} | | |`,
  ];
  return { rows, note: `list API: ${kind}; console use replayed: ${Object.entries(hour.done).map(([k, v]) => `${k} ${v}/${hour.planned[k]}`).join(', ')} in ${fmt(hour.ms / 1000, 1)} s` };
}

const met = (ok: boolean): string => (ok ? 'met' : '**not met**');

export async function runScale(): Promise<string> {
  const shape = shapeFromEnv();
  const loadBefore = readFileSync('/proc/loadavg', 'utf8').trim();
  const built = await scaleStore(shape, log);
  log(built.build ? `built ${built.dir} in ${fmt(built.build.ms / 1000, 1)} s` : `cached store ${built.dir} (built ${new Date(built.builtAt).toISOString()} in ${fmt(built.load.ms / 1000, 1)} s)`);
  const dir = copyStore(built.dir, 'sb-bench-scale-');
  // The copy is a gigabyte of dirty pages that the kernel writes back some 30 s later: with
  // BENCH_SCALE_ONLY=ingest, during the ingest measures, under the full store's commits (fsync).
  for (const name of readdirSync(dir)) {
    const fd = openSync(join(dir, name), 'r+');
    fsyncSync(fd);
    closeSync(fd);
  }
  const emptyDir = mkdtempSync(join(tmpdir(), 'sb-bench-scale-empty-'));
  const receiver = await startCountingReceiver();
  const { sendUrl } = receiver;
  try {
    const dbPath = join(dir, 'switchboard.db');
    const dbMb = fileMb(dbPath);
    const walMb = fileMb(`${dbPath}-wal`);
    const facts = storeFacts(dbPath);
    cliOk(dir, 'clients', 'set', SCALE_CLIENT, '--send-url', sendUrl, '--quiet-seconds', '1');
    // Covers the store's last hour of traffic even when the cached store is some hours old.
    const statsMinutes = Math.min(24 * 60, Math.ceil((Date.now() - facts.lastAt) / 60_000) + 60);

    const consoleSide = ONLY === 'ingest' ? null : await measureConsole(dir, facts, statsMinutes);

    const kb = knowledgeBase(1000);
    const { secret: emptySecret } = prepareDataDir(emptyDir, sendUrl);
    cliOk(emptyDir, 'clients', 'set', SCALE_CLIENT, '--quiet-seconds', '1');
    const senders = facts.counts['senders']!;
    const ingested = ONLY === 'console' ? null : await ingest({ empty: { dir: emptyDir, secret: emptySecret }, full: { dir, secret: built.secret } }, kb, senders);
    const loadAfter = readFileSync('/proc/loadavg', 'utf8').trim();

    const c = facts.counts;
    const rows = [
      ...(consoleSide?.rows ?? []),
      `| database size: file + WAL | ${fmt(dbMb)} + ${fmt(walMb)} MiB | | |`,
      ...(ingested ? EVENTS : []).map((et) => {
        const { full, empty } = ingested![et];
        const ratio = full.rps / empty.rps;
        const errors = full.errors + empty.errors;
        return `| ingest ${et}, wrk ${CONNECTIONS} connections, 2 × ${SECONDS} s each (empty, full, full, empty): full / empty req/s (p99 ms) | ${fmt(full.rps)} (${fmt(full.p99, 1)}) / ${fmt(empty.rps)} (${fmt(empty.p99, 1)}) = **${fmt(ratio, 2)}×**${errors ? `, ${errors} non-2xx/socket errors` : ''} | ≥ 0.7× | ${met(ratio >= 0.7 && errors === 0)} |`;
      }),
    ];
    return [
      `bench/scale: ${fmt(c['messages']! + c['replies']!)} transcript entries (${fmt(c['messages']!)} messages, ${fmt(c['replies']!)} replies) in ${fmt(c['conversations']!)} conversations from ${fmt(c['senders']!)} senders; ${fmt(c['deliveries']!)} deliveries (${fmt(c['attempts']!)} attempts), ${fmt(c['needsHuman']!)} conversations need a human, ${fmt(c['idempotency']!)} idempotency and ${fmt(c['requestLog']!)} request-log rows; 1,000-entry knowledge base.`,
      `Store ${built.build ? `built in ${fmt(built.build.ms / 1000, 1)} s` : `from cache (built in ${fmt(built.load.ms / 1000, 1)} s)`}; ${consoleSide?.note ?? 'console not measured (BENCH_SCALE_ONLY=ingest)'}; ${fmt(receiver.delivered())} replies delivered during ingest. Load average before: ${loadBefore}; after: ${loadAfter}.`,
      '| measure | value | target | |',
      '|---|---:|---:|---|',
      ...rows,
    ].join('\n');
  } finally {
    receiver.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(emptyDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await runScale());
