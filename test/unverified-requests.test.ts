import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from '@playwright/test';
import { spawnServe, cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { buildConsole, chooseLanguage, CHROMIUM, consoleCall, launchChromium, openConsole, sendAs, stopServe, waitFor } from './helpers/console-session.ts';
import { mid } from './helpers/harness.ts';
import type { RequestLogItem } from '../src/shared/console-api.ts';

/**
 * Issue 27 item 4, end to end against `serve`: requests that fail authentication while naming a
 * real client are logged as unverified claims, never as that client's, and a flood of them
 * neither fills that client's view of the log nor pushes its verified rows out when the log is cut.
 */

const FLOOD = 1_100;
const MAX_UNVERIFIED = 100;
const nowSeconds = () => Math.floor(Date.now() / 1000);
const question = () => ({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'visitor', content: 'hello' });

/** `total` POSTs of made-up bodies, `concurrency` at a time; the statuses answered. */
async function flood(endpoint: string, total: number, body: (i: number) => unknown, concurrency = 8): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const r = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body(next++)) });
        await r.arrayBuffer();
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
    }),
  );
  return statuses;
}

const log = (server: ServeProcess, input: Record<string, unknown>) => consoleCall<RequestLogItem[]>(server, 'listRequests', input);
const skipBrowser = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM}`;

describe('unsigned requests claiming a real client, against serve', () => {
  let dir: string;
  let server: ServeProcess;
  let secret: string;
  let browser: Browser | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-unverified-'));
    secret = secretFrom(cli(dir, 'clients', 'add', 'acme').stdout);
    // Every refusal its own row (no counting, no address limit), and small limits, so 1,100 requests flood the log.
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({
        requestLogMaxRows: 1000,
        requestLogMaxUnverifiedRows: MAX_UNVERIFIED,
        requestLogAggregation: { enabled: false },
        addressRateLimit: { enabled: false },
      }),
    );
    server = await spawnServe(dir);
  });
  after(async () => {
    await browser?.close();
    await stopServe(server);
    rmSync(dir, { recursive: true, force: true });
  });

  it("are logged as unverified claims, and neither crowd acme's verified rows out of its filter nor out of the log", async () => {
    const signed: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await sendAs(server, 'acme', secret, question());
      assert.equal(r.status, 200);
      signed.push(((await r.json()) as { request_id: string }).request_id);
    }
    const statuses = await flood(server.endpoint, FLOOD, (i) => ({
      client: 'acme',
      signature: 'ab'.repeat(32),
      // Half with a stale timestamp: refused before the signature is even checked.
      timestamp: i % 2 ? nowSeconds() : nowSeconds() - 3600,
      message_info: question(),
    }));
    assert.deepEqual([...statuses], [[401, FLOOD]]);
    await waitFor('every row written', async () => (await log(server, { limit: 5000 })).length === FLOOD + 5);

    // acme's own view of the log: its five signed requests, not the newest 50 forgeries.
    const own = await log(server, { clientId: 'acme', limit: 50 });
    assert.deepEqual(own.map((r) => r.requestId).sort(), [...signed].sort());
    assert.ok(own.every((r) => r.verified && r.clientId === 'acme' && r.claimedClientId === null && r.status === 200));
    // The claims, when asked for: marked, under no client.
    const withClaims = await log(server, { clientId: 'acme', withClaims: true, limit: 50 });
    assert.equal(withClaims.length, 50);
    for (const r of withClaims) {
      assert.deepEqual([r.verified, r.clientId, r.claimedClientId, r.status], [false, null, 'acme', 401]);
      assert.match(r.code ?? '', /^(invalid_signature|timestamp_out_of_range)$/);
    }

    // The log is cut at start (then once a minute): unverified rows to their own limit, verified ones untouched.
    await stopServe(server);
    server = await spawnServe(dir);
    const rows = await waitFor('the log cut to 1,000 rows or fewer', async () => {
      const all = await log(server, { limit: 5000 });
      return all.length <= 1000 && all;
    });
    assert.deepEqual(rows.filter((r) => r.verified).map((r) => r.requestId).sort(), [...signed].sort(), "acme's verified rows all stay");
    await waitFor('the unverified rows cut to their own limit', async () => (await log(server, { limit: 5000 })).filter((r) => !r.verified).length === MAX_UNVERIFIED);
  });

  it('the console marks them "unverified: claimed acme", and its client filter shows them only when asked', { skip: skipBrowser }, async () => {
    buildConsole();
    browser = await launchChromium();
    const page = await openConsole(browser, server);
    await page.click('nav [data-view="requests"]');
    const rows = page.locator('[data-testid=request-log] tbody tr');
    const badges = page.getByTestId('unverified');
    await badges.first().waitFor();
    assert.equal(await badges.first().textContent(), 'unverified: claimed acme');
    assert.equal(await rows.first().locator('td:nth-child(2)').getAttribute('title'), 'Refused before its signature was checked: anyone can send such a request, naming any client.');

    await page.getByRole('combobox', { name: 'Client' }).selectOption('acme');
    await waitFor("acme's five rows", async () => (await rows.count()) === 5);
    assert.equal(await badges.count(), 0);
    assert.deepEqual(await rows.locator('td:nth-child(2)').allTextContents(), Array(5).fill('acme'));

    await page.getByRole('checkbox', { name: 'Include unverified claims' }).check();
    await waitFor('the claims too', async () => (await rows.count()) === 5 + MAX_UNVERIFIED);
    assert.equal(await badges.count(), MAX_UNVERIFIED);

    await chooseLanguage(page, 'zh-CN');
    await waitFor('the badge in Chinese', async () => (await badges.first().textContent()) === '未验证：自称 acme');
  });
});
