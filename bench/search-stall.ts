/**
 * bench/search-stall (issues 10 and 12): ingest latency while the console searches every 2 s,
 * with the console read thread off and on, in the same run, against a baseline without searches.
 * Builds a store (bulk insert, FTS5 'rebuild'): BENCH_MESSAGES messages in 5,000 conversations, each
 * containing the searched word, so a search is as long as a common term on a big store. Then, per
 * row of the table, `npm run serve` as its own process, signed auto_dialog requests at BENCH_RATE/s
 * (open loop, from this process) for BENCH_SECONDS, and a console search over the console's HTTP
 * API every 2 s.
 *   node bench/search-stall.ts   (or npm run bench -- search-stall)
 * Environment: BENCH_MESSAGES (200000), BENCH_RATE (50), BENCH_SECONDS (10), BENCH_ROUNDS (1).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHmac, createSecretKey } from 'node:crypto';
import canonicalize from 'canonicalize';
import { openDatabase } from '../src/main/store/db.ts';
import { createStore } from '../src/main/store/index.ts';
import { bulkMessages } from '../src/main/store/bulk-messages.fixture.ts';
import { spawnServe, cli, secretFrom } from '../test/helpers/processes.ts';
import { percentile, fmt } from './lib.ts';

const MESSAGES = Number(process.env['BENCH_MESSAGES'] ?? 200_000);
const RATE = Number(process.env['BENCH_RATE'] ?? 50);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 1);
const SEARCH_EVERY_MS = 2000;
const TERM = 'order';

interface Row { label: string; searches: number[]; latencies: number[]; failed: number; loopMax: number }

async function scrapeLoopMax(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^switchboard_event_loop_delay_max_seconds (\S+)$/m.exec(text)?.[1] ?? NaN) * 1000;
}

async function run(dir: string, secret: string, label: string, readWorker: boolean, search: boolean): Promise<Row> {
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ readWorker, rateLimit: { perSecond: 1e6, burst: 1e6 } }));
  const server = await spawnServe(dir);
  const key = createSecretKey(Buffer.from(secret));
  const latencies: number[] = [];
  const searches: number[] = [];
  let failed = 0;
  const inFlight: Array<Promise<void>> = [];
  try {
    // Warm: the first search and the first request pay for compiling and opening.
    await fetch(`${server.consoleBase}api/listConversations`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${server.consoleToken}` }, body: JSON.stringify({ limit: 50 }) });
    await scrapeLoopMax(server.base);
    const searcher = search
      ? setInterval(() => {
          const t = performance.now();
          inFlight.push(
            fetch(`${server.consoleBase}api/listConversations`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${server.consoleToken}` },
              body: JSON.stringify({ search: TERM, limit: 50 }),
            })
              .then((r) => r.json())
              .then(() => void searches.push(performance.now() - t)),
          );
        }, SEARCH_EVERY_MS)
      : null;
    const start = performance.now();
    for (let n = 0; n < RATE * SECONDS; n++) {
      const wait = start + (n * 1000) / RATE - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const info = { event_type: 'auto_dialog', msg_id: `${label}-${n}`, from_user_id: `cust-${n % 2000}`, from_user_type: 2, content: `where is my parcel ${n}?` };
      const ts = Math.floor(Date.now() / 1000);
      const body = JSON.stringify({ client: 'bench', timestamp: ts, signature: createHmac('sha256', key).update(`${ts}.bench.${canonicalize(info)}`).digest('hex'), message_info: info });
      const sent = performance.now();
      inFlight.push(
        fetch(server.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
          async (r) => {
            await r.arrayBuffer();
            if (r.status === 200) latencies.push(performance.now() - sent);
            else failed++;
          },
          () => void failed++,
        ),
      );
    }
    if (searcher) clearInterval(searcher);
    await Promise.all(inFlight);
    const loopMax = await scrapeLoopMax(server.base);
    return { label, searches, latencies, failed, loopMax };
  } finally {
    server.child.kill('SIGTERM');
    await server.exit();
  }
}

export async function runSearchStall(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-stall-'));
  try {
    const db = openDatabase(join(dir, 'switchboard.db'));
    const built = performance.now();
    // Every message matches, in only 20 conversations: a page of 50 is never filled, so each search
    // reads every match, the costliest search there is (paging stops a common term's search early).
    bulkMessages(db, 0, MESSAGES, 20, (i) => `${TERM} ${i} for customer ${i % 20}: where is it?`);
    const buildS = (performance.now() - built) / 1000;
    const t = performance.now();
    createStore(db).console.conversations({ search: TERM, limit: 50, now: 0 });
    const inProcess = performance.now() - t;
    db.close();
    const secret = secretFrom(cli(dir, 'clients', 'add', 'bench', '--send-url', 'http://127.0.0.1:9/hook').stdout);
    // Rounds alternate the three, so a burst of load on a shared machine does not hit only one.
    const rows: Row[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      rows.push(await run(dir, secret, `none-${round}`, true, false), await run(dir, secret, `off-${round}`, false, true), await run(dir, secret, `on-${round}`, true, true));
    }
    const names: Record<string, string> = { none: 'no console search (baseline)', off: 'searching, `readWorker: false`', on: 'searching, `readWorker: true`' };
    const lines = rows.map((r) => {
      const l = Float64Array.from(r.latencies).sort();
      const s = Float64Array.from(r.searches).sort();
      return `| ${names[r.label.split('-')[0]!]}${ROUNDS > 1 ? ` (round ${Number(r.label.split('-')[1]) + 1})` : ''} | ${r.searches.length ? `${r.searches.length} × ${fmt(percentile(s, 50))} ms` : '–'} | ${fmt(l.length)}${r.failed ? ` (${r.failed} failed)` : ''} | ${fmt(percentile(l, 50), 1)} ms | ${fmt(percentile(l, 99), 1)} ms | ${fmt(l[l.length - 1] ?? NaN, 1)} ms | ${fmt(r.loopMax, 1)} ms |`;
    });
    return [
      `bench/search-stall: ${fmt(MESSAGES)} messages (built in ${fmt(buildS, 1)} s), a search for "${TERM}" matches all (${fmt(inProcess)} ms in-process, cold); auto_dialog at ${RATE}/s for ${SECONDS} s; a console search every ${SEARCH_EVERY_MS / 1000} s`,
      '',
      '| | searches (count × median) | requests | ingest p50 | ingest p99 | ingest max | longest event-loop stall |',
      '|---|---:|---:|---:|---:|---:|---:|',
      ...lines,
    ].join('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) console.log(await runSearchStall());
