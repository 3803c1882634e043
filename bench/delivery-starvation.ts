import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac } from 'node:crypto';
import canonicalize from 'canonicalize';
import { startTarget, cliOk, fmt } from './lib.ts';

/**
 * Issue 27 item 6: one client whose send_url never answers must not hold up another client's
 * replies. Client A's receiver takes every request and never answers; client B's answers 200 at
 * once. BENCH_DEAD_MESSAGES (130) messages of A from distinct customers, then one of B; it reports
 * the time from B's request to B's delivery (the 2 s quiet period included) and how many of A's
 * requests were open at that moment. `serve` runs with its default settings (64 deliveries in
 * flight, 15 s per try) unless BENCH_CONFIG gives config.json's text.
 *
 *     node_modules/.bin/node bench/delivery-starvation.ts
 */
const DEAD_MESSAGES = Number(process.env['BENCH_DEAD_MESSAGES'] ?? 130);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);

function signed(client: string, secret: string, info: Record<string, unknown>): string {
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = createHmac('sha256', secret).update(`${timestamp}.${client}.${canonicalize(info)}`).digest('hex');
  return JSON.stringify({ client, timestamp, signature, message_info: info });
}

async function post(endpoint: string, body: string): Promise<void> {
  const r = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  if (r.status !== 200) throw new Error(`POST answered ${r.status}: ${await r.text()}`);
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
}

async function round(n: number): Promise<{ latencyMs: number; deadOpen: number; deadSeen: number }> {
  let deadOpen = 0;
  let deadSeen = 0;
  // Reads each request and never answers: every try of A lasts its whole time-out.
  const dead = await listen((req) => {
    deadSeen++;
    deadOpen++;
    req.resume();
    req.socket.once('close', () => deadOpen--);
  });
  let arrived: (at: number) => void = () => {};
  const bArrival = new Promise<number>((r) => (arrived = r));
  const live = await listen((req, res) => {
    req.resume();
    req.on('end', () => {
      arrived(performance.now());
      res.end('{}');
    });
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-bench-starve-'));
  if (process.env['BENCH_CONFIG']) (await import('node:fs')).writeFileSync(join(dataDir, 'config.json'), process.env['BENCH_CONFIG']);
  const secretOf = (out: string): string => /^secret: (\S+)$/m.exec(out)![1]!;
  const secretA = secretOf(cliOk(dataDir, 'clients', 'add', 'a', '--send-url', dead.url, '--fallback-text', 'One moment please.'));
  const secretB = secretOf(cliOk(dataDir, 'clients', 'add', 'b', '--send-url', live.url, '--fallback-text', 'One moment please.'));
  const sb = await startTarget(['src/main/headless.ts', '--port', '0', '--console-port', '0', '--data-dir', dataDir]);
  try {
    for (let i = 0; i < DEAD_MESSAGES; i++) {
      await post(sb.endpoint, signed('a', secretA, { event_type: 'auto_dialog', msg_id: `a-${n}-${i}`, from_user_id: `cust-${i}`, from_user_type: 2, content: `Where is my order ${i}?` }));
    }
    const t0 = performance.now();
    await post(sb.endpoint, signed('b', secretB, { event_type: 'auto_dialog', msg_id: `b-${n}`, from_user_id: 'cust-b', from_user_type: 2, content: 'Hello?' }));
    const at = await Promise.race([bArrival, new Promise<number>((r) => setTimeout(() => r(NaN), 120_000).unref())]);
    return { latencyMs: at - t0, deadOpen, deadSeen };
  } finally {
    // The dead receiver's requests end first, so the server stops without waiting them out.
    dead.server.closeAllConnections();
    await sb.stop();
    for (const s of [dead.server, live.server]) {
      s.closeAllConnections();
      s.close();
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function runDeliveryStarvation(): Promise<string> {
  const loadAtStart = loadavg()[0]!;
  const rows: string[] = [];
  for (let n = 0; n < ROUNDS; n++) {
    const r = await round(n);
    rows.push(`| ${n + 1} | ${fmt(r.latencyMs)} ms | ${r.deadOpen} | ${r.deadSeen} |`);
  }
  return [
    `bench/delivery-starvation: ${DEAD_MESSAGES} replies of client A to a send_url that never answers, then one of client B (receiver answers 200 at once)`,
    "| round | B's request to B's delivery (2 s quiet period included) | A's requests open then | A's requests made by then |",
    '|---|---:|---:|---:|',
    ...rows,
    `load average (1 min) at start / end: ${fmt(loadAtStart, 1)} / ${fmt(loadavg()[0]!, 1)}`,
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await runDeliveryStarvation());
