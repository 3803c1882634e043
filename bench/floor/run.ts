import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, runWrk, signedBodies, startTarget, type WrkResult } from '../lib.ts';
import { kbQuestion, knowledgeBase } from '../kb-data.ts';

/**
 * bench/floor: how fast a server can be that only authenticates a website_dialog message and
 * stores it durably with an answer (bench/floor/server.ts), with no message search index, with
 * FTS5's trigram index as FTS5 merges it by default, and with Switchboard's paced merges. The
 * same wrk bodies as bench/ingest; the bare node:http server is the baseline, measured right
 * before each level. It says what part of bench/ingest's latency any implementation of the
 * protocol pays on this machine, and what the search index alone costs.
 */
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 8);
const LEVELS = (process.env['BENCH_LEVELS'] ?? '10,100').split(',').map(Number);
const THREADS = Number(process.env['BENCH_WRK_THREADS'] ?? 1);
const INDEXES = (process.env['BENCH_FLOOR_INDEXES'] ?? 'none,automerge,paced').split(',');
const SECRET = 'floor-bench-secret';

/** The process's CPU time (user + system) in ms, from /proc (Linux; clock ticks of 10 ms). */
export function cpuMs(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export async function runFloor(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-floor-'));
  const kb = knowledgeBase(1000);
  const bodies = signedBodies({ dir, clientId: 'bench', secret: SECRET, senders: 20_000, content: (n) => kbQuestion(kb, n) });
  const bare = await startTarget(['bench/bare-server.ts']);
  const rows: string[] = [];
  try {
    const bareFile = bodies.write('website_dialog', 20_000);
    for (const index of INDEXES) {
      const dbPath = join(dir, `floor-${index}.db`);
      const floor = await startTarget(['bench/floor/server.ts', dbPath], { env: { FLOOR_SECRET: SECRET, FLOOR_INDEX: index } });
      try {
        for (const c of LEVELS) {
          const file = bodies.write('website_dialog', 9000 * SECONDS);
          const base: WrkResult = await runWrk(bare.endpoint, c, bareFile, { seconds: Math.max(3, SECONDS / 2), threads: THREADS });
          const cpu0 = cpuMs(floor.child.pid);
          const r = await runWrk(floor.endpoint, c, file, { seconds: SECONDS, threads: THREADS });
          const cpu = cpuMs(floor.child.pid) - cpu0;
          rows.push(`| ${index} | ${c} | ${fmt(base.rps)} | ${fmt(r.rps)} | ${fmt(r.rps / base.rps, 3)} | ${fmt(r.p50, 2)} / ${fmt(r.p99, 2)} | ${fmt((cpu * 1000) / Math.max(1, r.requests))} | ${r.non2xx + r.socketErrors}${r.wraps ? ` (${r.wraps} pool wraps)` : ''} |`);
        }
      } finally {
        await floor.stop();
      }
    }
  } finally {
    await bare.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    `bench/floor: website_dialog bodies (signed, unique, 20,000 senders) against a server that only authenticates and stores each question and an answer (WAL, synchronous=FULL); wrk -t${THREADS}, ${SECONDS} s per level; bare: node:http measured right before each level`,
    '| search index | connections | bare req/s | floor req/s | ratio to bare | floor p50 / p99 ms | floor CPU per request µs | non-2xx + socket errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}
