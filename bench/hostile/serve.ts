import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { MAIN_V8_FLAGS } from '../../src/main/runtime-flags.ts';
import { ROOT } from '../lib.ts';

/**
 * The real `serve` (src/main/headless.ts with the product's V8 flags, as bench/lib.ts's
 * startTarget starts it) on a data dir, with what bench/hostile watches besides: the console
 * listener and its token, the lines it writes to stderr (a stack trace per request is an attack's
 * cost too), its RSS sampled from /proc, and whether it died.
 */
export interface Serve {
  endpoint: string;
  origin: string;
  consoleOrigin: string;
  token: string;
  pid: number;
  child: ChildProcess;
  /** Lines written to stderr so far. */
  stderrLines(): number;
  /** The last 30 of them. */
  stderrTail(): string[];
  /** How it ended, if it ended before stop() was called. */
  died(): string | null;
  /** POST /api/<method> on the console listener, as the console calls it. */
  consoleCall(method: string, input: unknown): Promise<{ status: number; ms: number; bytes: number; body: unknown }>;
  stop(): Promise<void>;
}

/** out/renderer must exist for the console listener to serve a page (and for /assets/ to be a folder). */
export function ensureConsoleBuilt(): void {
  if (existsSync(join(ROOT, 'out', 'renderer', 'index.html'))) return;
  const build = spawnSync(process.execPath, ['node_modules/electron-vite/bin/electron-vite.js', 'build', '--logLevel', 'warn'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`console build failed: ${build.stderr}`);
}

export async function startServe(dataDir: string): Promise<Serve> {
  const flags = process.env['BENCH_MAIN_FLAGS']?.split(' ').filter(Boolean) ?? MAIN_V8_FLAGS;
  const child = spawn(process.execPath, [...flags, 'src/main/headless.ts', '--port', '0', '--console-port', '0', '--data-dir', dataDir], {
    cwd: ROOT,
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderrLines = 0;
  const tail: string[] = [];
  const echo = process.env['BENCH_HOSTILE_STDERR'] === '1';
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderrLines++;
    tail.push(line);
    if (tail.length > 30) tail.shift();
    if (echo) console.error(`serve: ${line}`);
  });
  let stopping = false;
  let death: string | null = null;
  child.once('exit', (code, signal) => {
    if (!stopping) death = signal ? `killed by ${signal}` : `exited with ${code}`;
  });
  const lines = createInterface({ input: child.stdout! });
  const started = await new Promise<{ endpoint: string; console: string }>((resolve, reject) => {
    let endpoint = '';
    lines.on('line', (line) => {
      if (line.startsWith('endpoint: ')) endpoint = line.slice(10);
      if (line.startsWith('console: ')) resolve({ endpoint, console: line.slice(9) });
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before it listened`)));
  });
  const consoleUrl = new URL(started.console);
  const token = new URLSearchParams(consoleUrl.hash.slice(1)).get('token') ?? '';
  return {
    endpoint: started.endpoint,
    origin: new URL(started.endpoint).origin,
    consoleOrigin: consoleUrl.origin,
    token,
    pid: child.pid!,
    child,
    stderrLines: () => stderrLines,
    stderrTail: () => [...tail],
    died: () => death,
    async consoleCall(method, input) {
      const t0 = performance.now();
      const res = await fetch(`${consoleUrl.origin}/api/${method}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(input),
      });
      const bytes = Buffer.from(await res.arrayBuffer());
      const ms = performance.now() - t0;
      let body: unknown = null;
      try {
        body = JSON.parse(bytes.toString('utf8'));
      } catch {
        body = bytes.toString('utf8').slice(0, 200);
      }
      return { status: res.status, ms, bytes: bytes.length, body };
    },
    async stop() {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await once(child, 'exit');
      clearTimeout(timer);
    },
  };
}

/** VmRSS of a process in bytes (Linux), or NaN once it has gone. */
export function rssBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** RSS every `everyMs`, each sample tagged with the phase it was taken in. */
export function sampleRss(pid: number, phaseNow: () => string, everyMs = 100) {
  const samples: Array<{ phase: string; bytes: number }> = [];
  const take = (): void => {
    const bytes = rssBytes(pid);
    if (Number.isFinite(bytes)) samples.push({ phase: phaseNow(), bytes });
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop(): void {
      clearInterval(timer);
      take();
    },
    /** The last sample of a phase. */
    last(phase: string): number {
      return samples.findLast((s) => s.phase === phase)?.bytes ?? NaN;
    },
    /** The highest sample over the given phases. */
    peak(...phases: string[]): number {
      const peak = samples.filter((s) => phases.includes(s.phase)).reduce((m, s) => Math.max(m, s.bytes), -Infinity);
      return peak === -Infinity ? NaN : peak;
    },
  };
}

/** GET /metrics as series → value (bench/lib.ts's scrape, with a time-out: a stalled server must not stall the bench). */
export async function scrapeMetrics(origin: string): Promise<Map<string, number>> {
  const values = new Map<string, number>();
  try {
    const text = await (await fetch(`${origin}/metrics`, { signal: AbortSignal.timeout(30_000) })).text();
    for (const line of text.split('\n')) {
      const m = /^(\w+(?:\{[^}]*\})?) (\S+)$/.exec(line);
      if (m) values.set(m[1]!, Number(m[2]));
    }
  } catch {
    // A dead or stalled server: the figures read NaN.
  }
  return values;
}
