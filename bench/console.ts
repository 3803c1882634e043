import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createHmac, createSecretKey } from 'node:crypto';
import canonicalize from 'canonicalize';
import { chromium } from '@playwright/test';
import { openDatabase } from '../src/main/store/db.ts';
import { createStore } from '../src/main/store/index.ts';
import { spawnServe } from '../test/helpers/processes.ts';
import { cli, secretFrom } from '../test/helpers/processes.ts';
import { percentile, fmt, ROOT } from './lib.ts';

/**
 * bench/console: 10,000 conversations and one 5,000-message transcript, measured in Chromium:
 * first paint, time to a usable list, time to open the big transcript, and frame times while
 * 100 messages/s arrive. Targets: < 1.5 s, < 200 ms, p95 frame < 32 ms, no update lost.
 */
/** The few browser globals the measurements touch (this file is type-checked as Node code). */
interface Page {
  document: { querySelectorAll(selector: string): { length: number } };
  requestAnimationFrame(fn: (t: number) => void): void;
  __frames: number[];
  __stop?: boolean;
}

const CONVERSATIONS = 10_000;
const BIG = 5_000;
const RATE = 100;
const SECONDS = Number(process.env['BENCH_CONSOLE_SECONDS'] ?? 30);

export async function runConsole(): Promise<string> {
  const build = spawnSync(process.execPath, ['node_modules/electron-vite/bin/electron-vite.js', 'build', '--logLevel', 'warn'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`build failed: ${build.stderr}`);
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-console-'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ rateLimit: { perSecond: 1e6, burst: 1e6 } }));
  const secret = secretFrom(cli(dir, 'clients', 'add', 'bench', '--send-url', 'http://127.0.0.1:9/hook', '--group-policy', 'never').stdout);

  // Seed straight into the database: the bench measures the console, not ingest.
  const store = createStore(openDatabase(join(dir, 'switchboard.db')));
  const t0 = Date.now() - 3_600_000;
  store.transaction(() => {
    for (let i = 0; i < CONVERSATIONS; i++) {
      const id = `c_seed_${i}`;
      store.conversations.create({ id, clientId: 'bench', channel: 'im', peer: `u:cust-${i}`, groupId: null, customerId: `cust-${i}`, autoReply: 'active', now: t0 + i });
      const count = i === 0 ? BIG : 1;
      for (let j = 0; j < count; j++) {
        store.messages.insert({ conversationId: id, clientId: 'bench', eventType: 'auto_dialog', msgId: `seed-${i}-${j}`, role: j % 3 === 2 ? 'staff' : 'customer', fromUserId: `cust-${i}`, fromUserType: 2, content: `Seeded message ${j} of customer ${i}: where is my order?`, messageInfo: '{}', createTimestamp: null, receivedAt: t0 + i + j, replyScheduled: false, replyReason: 'not_mentioned' });
      }
      store.conversations.touch(id, count, t0 + i + count);
    }
  });
  store.close();

  const server = await spawnServe(dir);
  const browser = await chromium.launch({ executablePath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const navStart = Date.now();
  await page.goto(server.console);
  await page.waitForSelector('[data-conversation]');
  const listReady = Date.now() - navStart;
  const fcp = await page.evaluate(() => globalThis.performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null);

  // The big transcript is the oldest conversation: search for it, then time the open.
  await page.fill('input[type=search]', 'customer 0:');
  await page.waitForSelector('[data-conversation="c_seed_0"]');
  const openStart = Date.now();
  await page.click('[data-conversation="c_seed_0"]');
  await page.waitForSelector('[data-entry="seed-0-4999"]');
  const openMs = Date.now() - openStart;
  await page.fill('input[type=search]', '');
  await page.waitForFunction(() => (globalThis as unknown as Page).document.querySelectorAll('[data-conversation]').length > 5);

  // Frame times while messages arrive: 100/s, to new and existing conversations and the open one.
  await page.evaluate(() => {
    const w = globalThis as unknown as Page;
    w.__frames = [];
    let last = performance.now();
    const tick = (t: number): void => {
      w.__frames.push(t - last);
      last = t;
      if (!w.__stop) w.requestAnimationFrame(tick);
    };
    w.requestAnimationFrame(tick);
  });
  const key = createSecretKey(Buffer.from(secret));
  const sent: string[] = [];
  const targets = new Set<string>();
  const start = Date.now();
  for (let n = 0; n < RATE * SECONDS; n++) {
    const due = start + (n * 1000) / RATE;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const to = n % 10 === 0 ? 'cust-0' : `live-${n % 500}`;
    targets.add(to);
    const info = { event_type: 'auto_dialog', msg_id: `live-${n}`, from_user_id: to, from_user_type: 2, content: `live message ${n}` };
    const ts = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ client: 'bench', timestamp: ts, signature: createHmac('sha256', key).update(`${ts}.bench.${canonicalize(info)}`).digest('hex'), message_info: info });
    void fetch(server.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.status === 200 && sent.push(info.msg_id));
  }
  await new Promise((r) => setTimeout(r, 1500));
  const frames = Float64Array.from(
    await page.evaluate(() => {
      const w = globalThis as unknown as Page;
      w.__stop = true;
      return w.__frames;
    }),
  ).sort();
  // No update lost: the open transcript shows the last message sent to it, and the list shows every live conversation.
  const lastToBig = `live-${Math.floor((RATE * SECONDS - 1) / 10) * 10}`;
  const bigUpToDate = await page.waitForSelector(`[data-entry="${lastToBig}"]`, { timeout: 5000 }).then(() => true, () => false);
  // As the console itself calls its API: JSON, with the token from the printed URL as a Bearer header.
  // The list comes in pages (issue 12): follow nextCursor to the end.
  const liveRows = await page.evaluate(async (token) => {
    let rows = 0;
    let cursor: string | null | undefined;
    do {
      const r = await fetch('/api/listConversations', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ search: 'live message', limit: 200, cursor: cursor ?? undefined }),
      });
      const body = (await r.json()) as { value: { items: unknown[]; nextCursor: string | null } };
      rows += body.value.items.length;
      cursor = body.value.nextCursor;
    } while (cursor);
    return rows;
  }, server.consoleToken);
  await browser.close();
  server.child.kill('SIGTERM');
  await server.exit();
  rmSync(dir, { recursive: true, force: true });

  return [
    `bench/console: ${fmt(CONVERSATIONS)} conversations, one of ${fmt(BIG)} messages, then ${RATE} messages/s for ${SECONDS} s, in Chromium`,
    '| measure | value | target |',
    '|---|---:|---:|',
    `| first contentful paint | ${fcp === null ? 'n/a' : `${fmt(fcp)} ms`} | |`,
    `| list of ${fmt(CONVERSATIONS)} usable (navigation to first row) | ${fmt(listReady)} ms | < 1,500 ms |`,
    `| open the ${fmt(BIG)}-message transcript | ${fmt(openMs)} ms | < 200 ms |`,
    `| frame time while messages arrive, p50 / p95 / max | ${fmt(percentile(frames, 50), 1)} / ${fmt(percentile(frames, 95), 1)} / ${fmt(frames[frames.length - 1] ?? NaN, 1)} ms | p95 < 32 ms |`,
    `| updates: accepted ${fmt(sent.length)} of ${fmt(RATE * SECONDS)}; open transcript current: ${bigUpToDate ? 'yes' : 'NO'}; conversations with live messages listed: ${liveRows} of ${targets.size} | | none lost |`,
  ].join('\n');
}
