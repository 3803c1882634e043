import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { MAIN_V8_FLAGS } from '../src/main/runtime-flags.ts';
import { once } from 'node:events';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHmac, createSecretKey } from 'node:crypto';
import canonicalize from 'canonicalize';
import autocannon from 'autocannon';
import type { EventEmitter } from 'node:events';

export const ROOT = new URL('../', import.meta.url).pathname;

export interface Target {
  endpoint: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a server script as its own process (so it gets a core of its own) and waits for its endpoint line. */
export async function startTarget(args: string[], options: { env?: Record<string, string> } = {}): Promise<Target> {
  // Switchboard runs with the heap bounds the product starts it with; the bare server as Node's defaults.
  // BENCH_MAIN_FLAGS replaces them, to weigh another setting in the same run.
  const flags = args.includes('src/main/headless.ts') ? (process.env['BENCH_MAIN_FLAGS']?.split(' ').filter(Boolean) ?? MAIN_V8_FLAGS) : [];
  const child = spawn(process.execPath, [...flags, ...args], { cwd: ROOT, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'inherit'] });
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
      if (child.exitCode !== null || child.signalCode !== null) return; // died already: its exit was reported
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

/** The CLI on a data dir; throws with its stderr when it fails. */
export function cliOk(dataDir: string, ...args: string[]): string {
  const r = spawnSync(process.execPath, ['src/main/cli/index.ts', ...args, '--data-dir', dataDir], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`cli ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

export interface WrkResult { rps: number; requests: number; non2xx: number; socketErrors: number; p50: number; p99: number; wraps: number }

/**
 * wrk with bench/wrk/bodies.lua: each line of `bodiesFile` POSTed once (see bench/README.md).
 * `script` and `env`: another script built on bodies.lua (bench/wrk/nodes.lua) and what it reads.
 */
export function runWrk(url: string, connections: number, bodiesFile: string, o: { seconds: number; threads: number; script?: string; env?: Record<string, string> }): Promise<WrkResult> {
  // Asynchronous on purpose: a receiver in this process must keep answering while wrk runs.
  const child = spawn('wrk', [`-t${o.threads}`, `-c${connections}`, `-d${o.seconds}s`, '--timeout', '10s', '-s', join(ROOT, o.script ?? 'bench/wrk/bodies.lua'), url], {
    env: { ...process.env, ...o.env, BODIES_FILE: bodiesFile, WRK_THREADS: String(o.threads) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', (e) => reject(new Error(`could not run wrk (apt-get install wrk): ${e.message}`)));
    child.once('exit', () => {
      const line = /^WRK_JSON (.*)$/m.exec(out)?.[1];
      if (!line) return reject(new Error(`wrk printed no result:\n${out}`));
      const r = JSON.parse(line) as { requests: number; duration_us: number; non2xx: number; socket_errors: number; p50_us: number; p99_us: number; wraps: number };
      resolve({ rps: r.requests / (r.duration_us / 1e6), requests: r.requests, non2xx: r.non2xx, socketErrors: r.socket_errors, p50: r.p50_us / 1000, p99: r.p99_us / 1000, wraps: r.wraps });
    });
  });
}

/** GET /metrics as series → value; a labelled series keeps its labels as written (`x_bucket{le="0.01"}`). */
export async function scrape(endpoint: string): Promise<Map<string, number>> {
  const text = await (await fetch(new URL('/metrics', endpoint))).text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(\w+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) values.set(m[1]!, Number(m[2]));
  }
  return values;
}

export interface BodiesOptions {
  dir: string;
  clientId: string;
  secret: string;
  senders: number;
  content: (n: number) => string;
  /** Prefix of msg_id and from_user_id, so two pools never collide in one store. */
  prefix?: string;
}

/** Pre-signed unique request bodies for wrk, one JSON body per line, written to files under `dir`. */
export function signedBodies(o: BodiesOptions) {
  const key = createSecretKey(Buffer.from(o.secret, 'utf8'));
  const prefix = o.prefix ?? '';
  let n = 0;
  return {
    write(eventType: string, count: number): string {
      const now = Math.floor(Date.now() / 1000);
      const lines: string[] = [];
      for (let i = 0; i < count; i++, n++) {
        const sender = (n * 7) % o.senders;
        // Names as integrations send them (protocol v1.2), so the per-person name writes are in the figures.
        const info = { event_type: eventType, msg_id: `${prefix}b-${n}`, from_user_id: `${prefix}cust-${sender}`, from_user_nickname: `Customer ${sender}`, from_user_type: 2, content: o.content(n), create_timestamp: now };
        const signature = createHmac('sha256', key).update(`${now}.${o.clientId}.${canonicalize(info)}`).digest('hex');
        lines.push(JSON.stringify({ client: o.clientId, signature, timestamp: now, message_info: info }));
      }
      const file = join(o.dir, `bodies-${prefix}${n}.ndjson`);
      writeFileSync(file, lines.join('\n') + '\n');
      return file;
    },
  };
}

/** A send_url receiver answering 200 to every delivery and counting them. */
export async function startCountingReceiver(): Promise<{ sendUrl: string; delivered(): number; close(): void }> {
  let delivered = 0;
  const server = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      delivered++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    sendUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    delivered: () => delivered,
    close: () => server.close(),
  };
}

/** Median wall time of `f` over `runs` calls, after one unmeasured call. */
export function medianMs(f: () => unknown, runs = 7): number {
  f();
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    f();
    t.push(performance.now() - s);
  }
  return t.sort((a, b) => a - b)[runs >> 1]!;
}
