import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { DatabaseSync } from 'node:sqlite';
import { createHmac, createSecretKey } from 'node:crypto';
import canonicalize from 'canonicalize';
import { startTarget, load, fmt, ROOT, type LoadResult } from './lib.ts';

/**
 * bench/ingest: accepted auto_dialog requests per second and latency at 1, 10 and 100
 * connections, against a bare node:http server measured in the same run. Every accepted
 * message is committed with synchronous=FULL; the run checks the count in the database.
 */
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 8);
const LEVELS = (process.env['BENCH_LEVELS'] ?? '1,10,100').split(',').map(Number);

export async function runIngest(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-bench-ingest-'));
  // The benchmark measures the pipeline, not the per-client rate limit (100/s by default).
  writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ rateLimit: { perSecond: 1e9, burst: 1e9 } }));
  const add = spawnSync(process.execPath, ['src/main/cli/index.ts', 'clients', 'add', 'bench', '--send-url', 'http://127.0.0.1:9/hook', '--data-dir', dataDir], { cwd: ROOT, encoding: 'utf8' });
  const secret = /^secret: (\S+)$/m.exec(add.stdout)?.[1];
  if (!secret) throw new Error(`could not add the bench client: ${add.stderr}`);

  // Bodies are signed before the clock starts, so the load generator spends its core on sending.
  const key = createSecretKey(Buffer.from(secret, 'utf8'));
  let n = 0;
  const makeBody = (): string => {
    n++;
    const now = Math.floor(Date.now() / 1000);
    const info = { event_type: 'auto_dialog', msg_id: `b-${n}`, from_user_id: `cust-${n % 5000}`, from_user_type: 2, content: `Hello, I have a question about my order number ${n}. Can you help?`, create_timestamp: now };
    const signature = createHmac('sha256', key).update(`${now}.bench.${canonicalize(info)}`).digest('hex');
    return JSON.stringify({ client: 'bench', signature, timestamp: now, message_info: info });
  };
  const pool = (count: number): (() => string) => {
    const bodies = Array.from({ length: count }, makeBody);
    let i = 0;
    return () => bodies[i++] ?? makeBody();
  };
  const POOL = Number(process.env['BENCH_POOL'] ?? 40_000 * SECONDS);

  const bare = await startTarget(['bench/bare-server.ts']);
  const bareResults: LoadResult[] = [];
  for (const c of LEVELS) bareResults.push(await load(bare.endpoint, c, SECONDS, pool(POOL)));
  await bare.stop();

  const sb = await startTarget(['src/main/headless.ts', '--port', '0', '--console-port', '0', '--data-dir', dataDir]);
  const sbResults: LoadResult[] = [];
  for (const c of LEVELS) sbResults.push(await load(sb.endpoint, c, SECONDS, pool(POOL)));
  await sb.stop();

  const db = new DatabaseSync(join(dataDir, 'switchboard.db'), { readOnly: true });
  const stored = (db.prepare("SELECT count(*) AS n FROM messages WHERE event_type = 'auto_dialog'").get() as { n: number }).n;
  db.close();
  const accepted = sbResults.reduce((s, r) => s + r.ok, 0);
  rmSync(dataDir, { recursive: true, force: true });

  const lines = [
    `bench/ingest: signed auto_dialog requests, ${SECONDS} s per level, synchronous=FULL`,
    '| connections | bare req/s | switchboard req/s | ratio | bare p50 / p99 ms | switchboard p50 / p99 ms | errors |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...LEVELS.map((c, i) => {
      const b = bareResults[i]!;
      const s = sbResults[i]!;
      return `| ${c} | ${fmt(b.rps)} | ${fmt(s.rps)} | ${fmt(s.rps / b.rps, 2)} | ${fmt(b.p50, 2)} / ${fmt(b.p99, 2)} | ${fmt(s.p50, 2)} / ${fmt(s.p99, 2)} | ${s.failed} |`;
    }),
    `accepted ${fmt(accepted)} requests; ${fmt(stored)} messages in the database (${stored >= accepted ? 'every accepted message committed; the rest were in flight when the load stopped' : 'LOST MESSAGES'})`,
  ];
  return lines.join('\n');
}
