import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createServer, request, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac, createSecretKey } from 'node:crypto';
import canonicalize from 'canonicalize';
import { startTarget, percentile, fmt, ROOT } from './lib.ts';

/**
 * bench/delivery: auto replies delivered per second to a local receiver, and the latency from
 * the request to the delivery beyond the quiet period. Baseline in the same run: the same
 * receiver driven by a bare keep-alive HTTP client at the outbox's concurrency.
 */
const MESSAGES = Number(process.env['BENCH_DELIVERIES'] ?? 6000);
const QUIET_MS = 2000;
const CONCURRENCY = 64;
const LATENCY_RATE = 200;
const LATENCY_MESSAGES = 1000;

function post(agent: Agent, url: URL, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

export async function runDelivery(): Promise<string> {
  // The cores are shared: a load average well above 2 means the figures are the neighbours' too.
  const loadAtStart = loadavg()[0]!;
  const arrivals = new Map<string, number>();
  let delivered = 0;
  let first = 0;
  let last = 0;
  const receiver = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const now = performance.now();
      try {
        const body = JSON.parse(text) as { message_info?: { reply_to?: string[] } };
        for (const id of body.message_info?.reply_to ?? []) if (!arrivals.has(id)) arrivals.set(id, now);
      } catch {
        // The baseline posts plain bodies.
      }
      delivered++;
      if (!first) first = now;
      last = now;
      res.writeHead(200, { 'content-length': 2 });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  // Baseline: the receiver alone, fed by a bare client at the outbox's concurrency.
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const sample = JSON.stringify({ client: 'x', timestamp: 0, signature: 'x', message_info: { content: 'x'.repeat(120) } });
  const t0 = performance.now();
  await pool(Array.from({ length: MESSAGES }), CONCURRENCY, async () => void (await post(agent, new URL(hook), sample)));
  const baseline = MESSAGES / ((performance.now() - t0) / 1000);
  delivered = 0;
  first = 0;

  const dataDir = mkdtempSync(join(tmpdir(), 'sb-bench-delivery-'));
  writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ rateLimit: { perSecond: 1e9, burst: 1e9 } }));
  const add = spawnSync(process.execPath, ['src/main/cli/index.ts', 'clients', 'add', 'bench', '--send-url', hook, '--fallback-text', 'One moment please.', '--data-dir', dataDir], { cwd: ROOT, encoding: 'utf8' });
  const secret = /^secret: (\S+)$/m.exec(add.stdout)?.[1];
  if (!secret) throw new Error(`could not add the bench client: ${add.stderr}`);
  const key = createSecretKey(Buffer.from(secret));
  const now = Math.floor(Date.now() / 1000);
  // One message per customer: the 6-replies-per-minute limit is per conversation.
  const bodies = Array.from({ length: MESSAGES }, (_, i) => {
    const info = { event_type: 'auto_dialog', msg_id: `d-${i}`, from_user_id: `cust-${i}`, from_user_type: 2, content: `Where is my order ${i}?` };
    return { id: `d-${i}`, body: JSON.stringify({ client: 'bench', timestamp: now, signature: createHmac('sha256', key).update(`${now}.bench.${canonicalize(info)}`).digest('hex'), message_info: info }) };
  });

  const sb = await startTarget(['src/main/headless.ts', '--port', '0', '--console-port', '0', '--data-dir', dataDir]);
  const url = new URL(sb.endpoint);
  const sentAt = new Map<string, number>();
  const waitFor = async (count: number): Promise<void> => {
    const deadline = Date.now() + 60_000;
    while (arrivals.size < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  };

  // Throughput: every message as fast as the endpoint takes them; replies follow 2 s later.
  const burst = bodies.slice(0, MESSAGES - LATENCY_MESSAGES);
  const ingestStart = performance.now();
  await pool(burst, 32, async ({ id, body }) => {
    sentAt.set(id, performance.now());
    await post(agent, url, body);
  });
  const ingestSeconds = (performance.now() - ingestStart) / 1000;
  await waitFor(burst.length);
  const rate = delivered / ((last - first) / 1000);

  // Latency: a steady 200 messages/s, well below saturation.
  const paced = bodies.slice(MESSAGES - LATENCY_MESSAGES);
  const pacedStart = performance.now();
  await Promise.all(
    paced.map(async ({ id, body }, i) => {
      const due = pacedStart + (i * 1000) / LATENCY_RATE;
      await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
      sentAt.set(id, performance.now());
      await post(agent, url, body);
    }),
  );
  await waitFor(MESSAGES);
  await sb.stop();
  receiver.close();
  agent.destroy();
  rmSync(dataDir, { recursive: true, force: true });

  const overQuiet = (ids: Array<{ id: string }>): Float64Array =>
    Float64Array.from(ids.filter(({ id }) => arrivals.has(id)).map(({ id }) => arrivals.get(id)! - sentAt.get(id)! - QUIET_MS)).sort();
  const burstOver = overQuiet(burst);
  const pacedOver = overQuiet(paced);
  return [
    `bench/delivery: ${fmt(MESSAGES)} auto_dialog messages from distinct customers, quiet period ${QUIET_MS} ms, ${CONCURRENCY} deliveries in flight`,
    '| measure | value |',
    '|---|---:|',
    `| receiver alone, bare keep-alive client (baseline) | ${fmt(baseline)} req/s |`,
    `| burst: deliveries per second, first to last | ${fmt(rate)} /s (ratio ${fmt(rate / baseline, 2)}) |`,
    `| burst: messages ingested per second meanwhile | ${fmt(burst.length / ingestSeconds)} req/s |`,
    `| burst: request to delivery beyond the quiet period, p50 / p99 | ${fmt(percentile(burstOver, 50), 1)} / ${fmt(percentile(burstOver, 99), 1)} ms |`,
    `| steady ${LATENCY_RATE} msg/s: request to delivery beyond the quiet period, p50 / p99 / max | ${fmt(percentile(pacedOver, 50), 1)} / ${fmt(percentile(pacedOver, 99), 1)} / ${fmt(pacedOver[pacedOver.length - 1] ?? NaN, 1)} ms |`,
    `| delivered | ${fmt(arrivals.size)} of ${fmt(MESSAGES)} |`,
    `| load average (1 min) at start / end | ${fmt(loadAtStart, 1)} / ${fmt(loadavg()[0]!, 1)} |`,
  ].join('\n');
}
