import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, Agent } from 'node:http';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import { spawnServe } from './helpers/processes.ts';
import { startHarness, mid, T0, type Harness } from './helpers/harness.ts';
import { signBody } from './helpers/sign.ts';
import type { RequestLogRow } from '../src/main/store/request-log.ts';
import { ensureConsoleBuilt } from './helpers/build.ts';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

function post(url: string, agent: Agent, body: unknown): Promise<Answer> {
  const payload = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': payload.length } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** `total` requests made by `make`, `concurrency` at a time over one keep-alive agent. */
async function flood(url: string, total: number, make: (i: number) => unknown, concurrency = 16): Promise<Map<number, number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const statuses = new Map<number, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const r = await post(url, agent, make(next++));
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
    }),
  );
  agent.destroy();
  return statuses;
}

const text = () => ({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'visitor', content: 'hello' });
const failed = (rows: RequestLogRow[]) => rows.filter((r) => r.status >= 400);
const total = (rows: RequestLogRow[]) => rows.reduce((n, r) => n + r.count, 0);

describe('unauthenticated floods', () => {
  let h: Harness;
  let secret: string;
  before(async () => {
    h = await startHarness();
    secret = h.addClient('acme');
  });
  after(() => h.stop());

  it('1,000 unsigned and badly signed requests from one address: 429 after the burst, a handful of log rows, the honest client still served', async () => {
    const honest = new Agent({ keepAlive: true, maxSockets: 1 });
    const signed = () => signBody('acme', secret, text(), h.now());
    assert.equal((await post(h.url, honest, signed())).status, 200);

    const statuses = await flood(h.url, 1000, (i) =>
      i % 2 ? { client: 'acme', signature: 'ab'.repeat(32), timestamp: h.now(), message_info: text() } : { message_info: text() },
    );
    // The default burst is 100 refusals; the clock does not move, so nothing is earned back. Requests
    // already in flight when the bucket runs dry are still answered: at most one per connection.
    const refusedInFull = (statuses.get(400) ?? 0) + (statuses.get(401) ?? 0);
    assert.ok(refusedInFull >= 100 && refusedInFull < 100 + 16, JSON.stringify([...statuses]));
    assert.equal(statuses.get(429), 1000 - refusedInFull);

    const refused = await post(h.url, new Agent(), { message_info: text() });
    assert.equal(refused.status, 429);
    assert.equal(refused.body['code'], 'rate_limited');
    assert.ok(Number(refused.headers['retry-after']) >= 1, 'Retry-After');
    assert.match(String(refused.body['detail']), /failed authentication/);

    // The honest client's open connection is served all through, and costs the address nothing.
    for (let i = 0; i < 3; i++) assert.equal((await post(h.url, honest, signed())).status, 200);
    honest.destroy();
    // A new connection from the address is served once the Retry-After it was given has passed: the
    // requests in flight when the bucket ran dry overdrew it (up to 15 here), so that can be 2 s, not 1.
    h.clock.advance(Number(refused.headers['retry-after']) * 1000);
    assert.equal((await post(h.url, new Agent(), signed())).status, 200);

    await h.service.stop();
    const rows = h.admin.requestLog.recent(10_000);
    assert.equal(total(failed(rows)), 1001, 'every refused request is counted');
    assert.ok(failed(rows).length <= 3 * 6, `${failed(rows).length} rows for 1,001 refusals`);
    const limited = failed(rows).filter((r) => r.code === 'rate_limited');
    assert.equal(total(limited), 1001 - refusedInFull);
    assert.ok(limited.some((r) => r.count > 800 && r.remote === '127.0.0.1' && r.lastAt >= r.at));
    assert.equal(rows.filter((r) => r.status === 200).length, 5, 'accepted requests keep a row each');
  });
});

describe('signed requests never cost their address', () => {
  let h: Harness;
  let secret: string;
  before(async () => {
    h = await startHarness();
    secret = h.addClient('acme');
  });
  after(() => h.stop());

  it('150 signed but invalid messages, each on a new connection, are all answered 400, not 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 150; i++) {
      const agent = new Agent({ keepAlive: false });
      statuses.push((await post(h.url, agent, signBody('acme', secret, { event_type: 'website_dialog', msg_id: mid() }, h.now()))).status);
      agent.destroy();
    }
    assert.deepEqual([...new Set(statuses)], [400]);
    assert.equal((await h.post(text())).status, 200);
  });
});

describe('the request log counts repeats per window, on the injected clock', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    h.addClient('acme');
  });
  after(() => h.stop());

  it('within a minute: five rows of their own, then one row that counts; the next minute starts again', async () => {
    const bad = () => ({ client: 'acme', signature: 'ab'.repeat(32), timestamp: h.now(), message_info: text() });
    await flood(h.url, 20, bad, 4);
    h.clock.advance(59_000);
    await flood(h.url, 10, bad, 4);
    h.clock.advance(2_000);
    await flood(h.url, 20, bad, 4);

    // A restart writes out every count; the console then lists what the database holds.
    await h.restart();
    const rows = (await h.service.console.asOwner.listRequests({ limit: 100, onlyFailed: true })).reverse();
    assert.deepEqual(rows.map((r) => r.count), [1, 1, 1, 1, 1, 25, 1, 1, 1, 1, 1, 15]);
    const counting = rows[5]!;
    assert.equal(counting.at, T0, 'first of the window');
    assert.equal(counting.lastAt, T0 + 59_000, 'last of the window');
    assert.equal(counting.code, 'invalid_signature');
    // The dashboard counts requests, not rows.
    const stats = await h.service.console.asOwner.stats({ minutes: 5 });
    assert.equal(stats.rejected.reduce((a, b) => a + b, 0), 50);
  });
});

describe('metric series', () => {
  let h: Harness;
  before(async () => {
    // Without the address limit, so every one of these requests reaches the event_type label.
    h = await startHarness({ config: { addressRateLimit: { enabled: false, perSecond: 1, burst: 1, maxAddresses: 100 } } });
  });
  after(() => h.stop());

  it('2,000 unsigned requests with made-up event_type values leave a bounded number of series', async () => {
    const seriesOf = (text: string): string[] => text.split('\n').filter((l) => l.startsWith('switchboard_')).map((l) => l.slice(0, l.lastIndexOf(' ')));
    const before = seriesOf(await (await fetch(`${h.base}/metrics`)).text());
    const statuses = await flood(h.url, 2000, (i) => ({ client: 'nobody', signature: '00', timestamp: h.now(), message_info: { event_type: `evil_${i}_${Math.random()}` } }));
    assert.equal(statuses.get(401), 2000);
    const metrics = await (await fetch(`${h.base}/metrics`)).text();
    // 2,000 made-up values add one series (event_type="other", status="401"), not 2,000.
    const added = seriesOf(metrics).filter((s) => !before.includes(s));
    assert.ok(added.length <= 1, `new series: ${added.join(', ')}`);
    assert.match(metrics, /switchboard_http_requests_total\{event_type="other",status="401"\} 2000/);
  });
});

describe('request log pruning', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ config: { requestLogMaxRows: 1000, requestLogRetentionDays: 30 } });
  });
  after(() => h.stop());

  it('keeps the newest verified rows within the size limit and drops rows past the retention, in batches', async () => {
    const row = (at: number, i: number) => ({
      at, requestId: `old-${i}`, method: 'POST', path: '/custom-im/chat-messages', clientId: 'acme', eventType: null, msgId: null,
      conversationId: null, status: 409, code: 'replayed_request', latencyMs: 0.1, replayed: false, problem: '{"code":"replayed_request"}', remote: '127.0.0.1',
      verified: true,
    });
    const insert = (from: number, to: number, at: number): void => {
      h.admin.connection.exec('BEGIN');
      for (let i = from; i < to; i++) h.admin.requestLog.insert(row(at, i));
      h.admin.connection.exec('COMMIT');
    };
    const afterPruning = async (): Promise<number> => {
      // Pruning runs on the writer thread, a batch per write: wait for the pass to end, not for time.
      await h.quiesce();
      return h.admin.requestLog.recent(10_000).length;
    };
    insert(0, 200, T0 - 31 * 86_400_000);
    insert(200, 700, T0 - 1000);
    // The next maintenance pass, a minute on.
    h.clock.advance(60_000);
    assert.equal(await afterPruning(), 500, 'rows past the retention went');
    insert(700, 4200, T0);
    h.clock.advance(60_000);
    assert.equal(await afterPruning(), 1000);
    const rows = h.admin.requestLog.recent(10_000);
    assert.deepEqual([rows.at(-1)!.requestId, rows[0]!.requestId], ['old-3200', 'old-4199'], 'the newest 1,000 stay');
  });
});

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

describe('the console shows a counted row with its count', { skip: existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM}` }, () => {
  it('30 unsigned requests: five rows of their own and one marked ×25', async () => {
    ensureConsoleBuilt();
    const dir = mkdtempSync(join(tmpdir(), 'sb-flood-ui-'));
    const server = await spawnServe(dir);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'] });
    try {
      const statuses = await flood(server.endpoint, 30, () => ({ message_info: text() }), 1);
      assert.equal(statuses.get(400), 30);
      const page = await browser.newPage({ locale: 'en-US' });
      page.setDefaultTimeout(10_000);
      await page.goto(server.console);
      await page.click('nav >> text=Request log');
      await page.check('text=Rejected only');
      // The count reaches the database within a second and the open console reloads on its own.
      const counted = await page.waitForSelector('[data-testid=request-log] tr:has([data-testid=request-count]:has-text("×25"))');
      assert.match((await counted.textContent()) ?? '', /validation_failed/);
      assert.equal(await page.locator('[data-testid=request-log] tbody tr').count(), 6);
    } finally {
      await browser.close();
      server.child.kill('SIGTERM');
      await server.exit();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
