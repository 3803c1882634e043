import { mkdtempSync, writeFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { DatabaseSync } from 'node:sqlite';
import { startTarget, fmt } from './lib.ts';

/**
 * bench/flood: 100,000 unsigned requests from one address, driven by wrk against the real
 * `serve`, and what they leave in the database. The same run measures a baseline with the
 * address limit and the request log counting switched off by settings (one row per request, as
 * before), the counting alone, and the defaults.
 */
const TOTAL = Number(process.env['BENCH_FLOOD_REQUESTS'] ?? 100_000);
const THREADS = 2;
const CONNECTIONS = Number(process.env['BENCH_FLOOD_CONNECTIONS'] ?? 50);

// Each wrk thread stops itself after its share of requests and says so; wrk itself waits out its
// duration, so the bench interrupts it (SIGINT: it prints its summary) once every thread is done.
// Bodies differ (msg_id, timestamp) like a real flood's, and none carries a signature.
const LUA = `
local limit = tonumber(os.getenv("FLOOD_PER_THREAD"))
local sent, answered = 0, 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  sent = sent + 1
  local body = string.format('{"client":"acme","timestamp":%d,"message_info":{"event_type":"auto_dialog","msg_id":"flood-%d","from_user_id":"u","from_user_type":2,"content":"hello there, is anyone reading this?"}}', os.time(), sent)
  return wrk.format(nil, nil, nil, body)
end
response = function(status, headers, body)
  answered = answered + 1
  if answered == limit then
    wrk.thread:stop()
    io.write("thread done\\n")
    io.flush()
  end
end
`;

interface Variant {
  name: string;
  config: Record<string, unknown>;
}

const VARIANTS: Variant[] = [
  {
    name: 'baseline: no address limit, a row per request',
    config: { addressRateLimit: { enabled: false }, requestLogAggregation: { enabled: false } },
  },
  { name: 'counting only (no address limit)', config: { addressRateLimit: { enabled: false } } },
  { name: 'defaults: address limit and counting', config: {} },
];

interface Figures {
  requests: number;
  seconds: number;
  statuses: string;
  runningBytes: number;
  stoppedBytes: number;
  rows: number;
  counted: number;
}

const size = (path: string): number => (existsSync(path) ? statSync(path).size : 0);
const dbBytes = (dir: string): number => ['switchboard.db', 'switchboard.db-wal'].reduce((n, f) => n + size(join(dir, f)), 0);

function runWrk(url: string, luaPath: string): Promise<{ requests: number; seconds: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', ['-t', String(THREADS), '-c', String(CONNECTIONS), '-d', '300s', '--timeout', '10s', '-s', luaPath, url], {
      env: { ...process.env, FLOOD_PER_THREAD: String(Math.ceil(TOTAL / THREADS)) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    let interrupted = false;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (!interrupted && out.split('thread done').length - 1 >= THREADS) {
        interrupted = true;
        child.kill('SIGINT');
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const m = /(\d+) requests in ([\d.]+)(m?s)/.exec(out);
      if (!m) return reject(new Error(`wrk failed (${code}): ${out}`));
      resolve({ requests: Number(m[1]), seconds: Number(m[2]) / (m[3] === 'ms' ? 1000 : 1) });
    });
  });
}

async function measure(variant: Variant, luaPath: string): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-flood-'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify(variant.config));
  const args = ['src/main/headless.ts', '--port', '0', '--console-port', '0', '--data-dir', dir];
  // A first start and stop, then a checkpoint: the database of an idle service, without a WAL.
  await (await startTarget(args)).stop();
  const idle = new DatabaseSync(join(dir, 'switchboard.db'));
  idle.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  idle.close();
  const idleBytes = dbBytes(dir);
  const server = await startTarget(args);
  await new Promise((r) => setTimeout(r, 500));
  const before = dbBytes(dir);
  const { seconds } = await runWrk(server.endpoint, luaPath);
  // The last counts reach the database within a second.
  await new Promise((r) => setTimeout(r, 1500));
  const runningBytes = dbBytes(dir) - before;
  const metrics = await (await fetch(server.endpoint.replace('/custom-im/chat-messages', '/metrics'))).text();
  const answers = [...metrics.matchAll(/switchboard_http_requests_total\{event_type="[^"]*",status="(\d+)"\} (\d+)/g)].map((m) => [m[1]!, Number(m[2])] as const);
  await server.stop();
  const stoppedBytes = dbBytes(dir) - idleBytes;
  const db = new DatabaseSync(join(dir, 'switchboard.db'), { readOnly: true });
  const { rows, counted } = db.prepare('SELECT count(*) AS rows, coalesce(sum(count), 0) AS counted FROM request_log').get() as { rows: number; counted: number };
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return {
    // What the server answered (wrk's own tally misses the requests in flight when it stops).
    requests: answers.reduce((n, [, c]) => n + c, 0),
    seconds,
    statuses: answers.map(([status, n]) => `${status}: ${fmt(n)}`).join(', '),
    runningBytes,
    stoppedBytes,
    rows,
    counted,
  };
}

export async function runFlood(): Promise<string> {
  const luaDir = mkdtempSync(join(tmpdir(), 'sb-bench-flood-lua-'));
  const luaPath = join(luaDir, 'flood.lua');
  writeFileSync(luaPath, LUA);
  const results: Figures[] = [];
  try {
    for (const v of VARIANTS) results.push(await measure(v, luaPath));
  } finally {
    rmSync(luaDir, { recursive: true, force: true });
  }
  const lines = [
    `bench/flood: ${fmt(TOTAL)} unsigned requests from one address (wrk, ${THREADS} threads, ${CONNECTIONS} connections) against serve`,
    '| settings | requests | req/s | database + WAL growth while serving | per request | database growth after a clean stop | per request | request_log rows (requests counted) | answers |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|',
    ...VARIANTS.map((v, i) => {
      const r = results[i]!;
      return `| ${v.name} | ${fmt(r.requests)} | ${fmt(r.requests / r.seconds)} | ${fmt(r.runningBytes)} B | ${fmt(r.runningBytes / r.requests, 1)} B | ${fmt(r.stoppedBytes)} B | ${fmt(r.stoppedBytes / r.requests, 1)} B | ${fmt(r.rows)} (${fmt(r.counted)}) | ${r.statuses} |`;
    }),
  ];
  return lines.join('\n');
}
