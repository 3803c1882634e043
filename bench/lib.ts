import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import type { EventEmitter } from 'node:events';

export const ROOT = new URL('../', import.meta.url).pathname;

export interface Target {
  endpoint: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a server script as its own process (so it gets a core of its own) and waits for its endpoint line. */
export async function startTarget(args: string[]): Promise<Target> {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const endpoint = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('endpoint: ')) resolve(line.slice(10));
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
  return {
    endpoint,
    child,
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

export interface LoadResult {
  connections: number;
  ok: number;
  failed: number;
  rps: number;
  p50: number;
  p99: number;
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Closed-loop load: `connections` keep-alive connections, each sending the next body as soon as the last answer came. */
export async function load(url: string, connections: number, seconds: number, nextBody: () => string): Promise<LoadResult> {
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  // The instance is both an event emitter and a promise of the result.
  const instance = autocannon({
    url,
    connections,
    duration: seconds,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    requests: [{ setupRequest: (req) => ({ ...req, body: nextBody() }) }],
  }) as unknown as EventEmitter & Promise<autocannon.Result>;
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    latencies.push(ms);
    if (status >= 200 && status < 300) ok++;
    else failed++;
  });
  const result = await instance;
  const sorted = Float64Array.from(latencies).sort();
  return { connections, ok, failed: failed + result.errors, rps: ok / result.duration, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}
