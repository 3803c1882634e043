import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { MAIN_V8_FLAGS } from '../../src/main/runtime-flags.ts';
import { ROOT, fmt } from '../lib.ts';

/**
 * bench/startup: where the service's start-up goes (issue 26: "start to /healthz" 2.1–2.8 s on
 * the full store, 1.9–2.0 s on an empty data folder, against < 2 s). Spawns
 * `node src/main/headless.ts` (as bench/scale does: no `electron-vite build`) on a fresh empty
 * data folder until /healthz answers, with bench/startup/marks.ts preloaded to time each step,
 * in alternating variants. Prints the median and range of each step's time from spawn.
 *
 *   node bench/startup/run.ts                       # 5 rounds, a fresh empty data folder each start
 *   BENCH_STARTUP_RUNS=9 BENCH_STARTUP_DATA=DIR node bench/startup/run.ts   # DIR itself, every start
 */
const RUNS = Number(process.env['BENCH_STARTUP_RUNS'] ?? 5);
const DATA = process.env['BENCH_STARTUP_DATA'];
// BENCH_STARTUP_OWN_CACHE=1: one more variant with a compile cache of its own in a temp folder.
const cacheDir = process.env['BENCH_STARTUP_OWN_CACHE'] ? mkdtempSync(join(tmpdir(), 'sb-startup-cache-')) : null;

interface Variant { name: string; flags: string[]; env: Record<string, string>; marks: boolean; entry?: string }
// headless.ts turns Node's compile cache on (node_modules/.cache/node-compile); NODE_DISABLE_COMPILE_CACHE=1
// starts as before that change. A first start of each variant is not counted (it fills the cache).
const off = { NODE_DISABLE_COMPILE_CACHE: '1' };
const VARIANTS: Variant[] = [
  { name: 'compile cache off', flags: [...MAIN_V8_FLAGS], env: off, marks: true },
  { name: 'as served (compile cache, warm)', flags: [...MAIN_V8_FLAGS], env: {}, marks: true },
  { name: 'as served, no marks preload', flags: [...MAIN_V8_FLAGS], env: {}, marks: false },
  // BENCH_STARTUP_ALT=src/main/x.ts: another entry point in place of headless.ts (to weigh a change in the same run).
  ...(process.env['BENCH_STARTUP_ALT'] ? [{ name: process.env['BENCH_STARTUP_ALT'], flags: [...MAIN_V8_FLAGS], env: {}, marks: true, entry: process.env['BENCH_STARTUP_ALT'] }] : []),
  ...(process.env['BENCH_STARTUP_OWN_CACHE'] ? [{ name: 'NODE_COMPILE_CACHE=(temp dir)', flags: [...MAIN_V8_FLAGS], env: { NODE_COMPILE_CACHE: cacheDir! }, marks: true }] : []),
];

interface Run { total: number; rss: number; steps: Map<string, number> }

async function startOnce(v: Variant): Promise<Run> {
  const dataDir = DATA ?? mkdtempSync(join(tmpdir(), 'sb-startup-'));
  const t0 = performance.timeOrigin + performance.now();
  const child = spawn(process.execPath, [...v.flags, ...(v.marks ? ['--import', './bench/startup/marks.mjs'] : []), v.entry ?? 'src/main/headless.ts', '--port', '0', '--console-port', '0', '--data-dir', dataDir], {
    cwd: ROOT,
    env: { ...process.env, ...v.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const steps = new Map<string, number>();
  createInterface({ input: child.stderr! }).on('line', (line) => {
    const m = /^STARTUP_MARK (\S+) (.*) (\d+\.\d)$/.exec(line);
    if (m) {
      // Worker threads are numbered as created: 1 the writer, 2 the console reads, 3 the engine.
      const key = `${m[1]!}: ${m[2]!}`;
      if (!steps.has(key)) steps.set(key, Number(m[3]) - t0);
    } else if (!line.startsWith('SIGTERM')) process.stderr.write(`${line}\n`);
  });
  const endpoint = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('endpoint: ')) resolve(line.slice(10));
    });
    child.once('exit', (code) => reject(new Error(`headless exited with ${code}`)));
  });
  steps.set('endpoint printed', performance.timeOrigin + performance.now() - t0);
  const healthz = new URL('/healthz', endpoint);
  for (;;) {
    if (await fetch(healthz).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const total = performance.timeOrigin + performance.now() - t0;
  const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
  child.kill('SIGTERM');
  await once(child, 'exit');
  if (!DATA) rmSync(dataDir, { recursive: true, force: true });
  return { total, rss, steps };
}

/** A bare `node -e 0`: what starting any Node process costs on this machine right now. */
function bareNode(): number {
  const t0 = performance.now();
  spawnSync(process.execPath, ['-e', '0']);
  return performance.now() - t0;
}

export async function runStartup(): Promise<string> {
  const results = new Map<string, Run[]>(VARIANTS.map((v) => [v.name, []]));
  const bare: number[] = [];
  const loads: number[] = [];
  // A first run fills the compile cache (and the page cache) and is not counted.
  for (const v of VARIANTS) await startOnce(v);
  for (let i = 0; i < RUNS; i++) {
    loads.push(Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]));
    bare.push(bareNode());
    // Alternate the order so a machine getting busier or quieter weighs on every variant alike.
    for (const v of i % 2 ? [...VARIANTS].reverse() : VARIANTS) results.get(v.name)!.push(await startOnce(v));
  }
  if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  const range = (xs: number[]): string => `${fmt(med(xs))} (${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))})`;
  const lines = [
    `bench/startup: spawn → /healthz 200 on ${DATA ? DATA : 'a fresh empty data folder'}, ${RUNS} rounds (variants alternated), median (min–max) ms; load average ${loads.map((l) => fmt(l, 2)).join(', ')}`,
    `bare \`node -e 0\`: ${range(bare)} ms`,
    '',
    `| step, ms from spawn | ${VARIANTS.map((v) => v.name).join(' | ')} |`,
    `|---|${VARIANTS.map(() => '---:').join('|')}|`,
  ];
  const keys = [...new Set([...results.values()].flatMap((runs) => runs.flatMap((r) => [...r.steps.keys()])))];
  // In the order of the first variant's medians (every step is marked there).
  const order = (k: string): number => med(results.get(VARIANTS[0]!.name)!.map((r) => r.steps.get(k) ?? Infinity));
  for (const k of keys.sort((a, b) => order(a) - order(b))) {
    lines.push(`| ${k} | ${VARIANTS.map((v) => {
      const xs = results.get(v.name)!.map((r) => r.steps.get(k)).filter((x): x is number => x !== undefined);
      return xs.length ? range(xs) : '–';
    }).join(' | ')} |`);
  }
  lines.push(`| **/healthz 200** | ${VARIANTS.map((v) => `**${range(results.get(v.name)!.map((r) => r.total))}**`).join(' | ')} |`);
  lines.push(`| RSS at /healthz, MB | ${VARIANTS.map((v) => range(results.get(v.name)!.map((r) => r.rss))).join(' | ')} |`);
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await runStartup());
