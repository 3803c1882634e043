import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Browser, Page } from '@playwright/test';
import { cli, type ServeProcess } from './helpers/processes.ts';
import { buildConsole, CHROMIUM, consoleCall, launchChromium, openConsole, startServe, stopServe } from './helpers/console-session.ts';
import { signBody } from './helpers/sign.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

/** A long conversation: more than two pages of 50 messages; line 0 is the oldest. */
const LINES = 130;

function seed(dir: string): void {
  const db = new DatabaseSync(join(dir, 'switchboard.db'));
  const now = Date.now();
  db.exec('BEGIN');
  db.prepare(
    `INSERT INTO conversations (id, client_id, channel, peer, customer_id, needs_human, message_count, created_at, last_message_at)
     VALUES ('long', 'acme', 'web', 'u:chatty', 'chatty', 0, ?, ?, ?)`,
  ).run(LINES, now - LINES * 60_000, now - 60_000);
  const msg = db.prepare("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, from_user_id, content, message_info, received_at) VALUES ('long', 'acme', 'website_dialog', ?, 'customer', 'chatty', ?, '{}', ?)");
  for (let i = 0; i < LINES; i++) msg.run(`m${i}`, `line number ${i}`, now - (LINES - i) * 60_000);
  db.exec('COMMIT');
  db.close();
}

describe('a long transcript loads a page at a time (issue 12)', { skip }, () => {
  let server: ServeProcess;
  let browser: Browser;
  let page: Page;
  let secret = '';
  const asked: Array<{ limit?: number; beforeId?: number }> = [];

  before(async () => {
    buildConsole();
    const dir = mkdtempSync(join(tmpdir(), 'sb-tpaging-'));
    const added = cli(dir, 'clients', 'add', 'acme');
    secret = /^secret: (\S+)$/m.exec(added.stdout)![1]!;
    seed(dir);
    ({ server } = await startServe(dir));
    browser = await launchChromium();
    page = await openConsole(browser, server);
    page.on('request', (r) => {
      if (r.url().endsWith('/api/getTranscript')) asked.push(JSON.parse(r.postData() ?? '{}') as { limit?: number; beforeId?: number });
    });
  });
  after(async () => {
    await browser?.close();
    await stopServe(server);
  });

  const lines = () => page.locator('[data-testid=transcript] .entries > li');

  it('opens on the newest 50; "Load earlier" fetches only the 50 before them, until the first line', async () => {
    await page.click('[data-conversation="long"]');
    await page.waitForSelector('[data-testid=transcript] >> text=line number 129');
    assert.equal(await lines().count(), 50);
    assert.equal(await page.locator('text=line number 79').count(), 0);
    // Scrolled up to the first line shown: after "Load earlier" that line stays where it was on screen.
    const offsetOf80 = () =>
      page.evaluate(`(() => {
        const scroller = document.querySelector('.transcript-scroll');
        const line = [...document.querySelectorAll('[data-testid=transcript] .entries > li')].find((li) => li.textContent.includes('line number 80'));
        return line.getBoundingClientRect().top - scroller.getBoundingClientRect().top;
      })()`) as Promise<number>;
    await page.evaluate(`document.querySelector('.transcript-scroll').scrollTop = 0`);
    await page.waitForTimeout(100);
    const before80 = await offsetOf80();
    await page.getByRole('button', { name: 'Load earlier messages' }).click();
    await page.waitForSelector('[data-testid=transcript] >> text=line number 30');
    await page.waitForTimeout(100);
    const after80 = await offsetOf80();
    assert.ok(Math.abs(after80 - before80) < 60, `line 80 stayed in place: ${before80} px from the top before, ${after80} px after`);
    assert.equal(await lines().count(), 100);
    await page.getByRole('button', { name: 'Load earlier messages' }).click();
    await page.waitForSelector('[data-testid=transcript] >> text=line number 0');
    assert.equal(await lines().count(), LINES);
    assert.equal(await page.getByRole('button', { name: 'Load earlier messages' }).count(), 0, 'no button at the first line');
    const texts = await lines().allTextContents();
    const order = texts.map((t) => Number(/line number (\d+)/.exec(t)?.[1]));
    assert.deepEqual(order, [...order].sort((a, b) => a - b), 'oldest first, no line twice');
    // Each step asked for one page before the first line shown: never the whole transcript again.
    const earlier = asked.filter((a) => a.beforeId !== undefined);
    assert.equal(earlier.length, 2);
    for (const a of asked) assert.equal(a.limit, 50);
  });

  it('a live message appends to what is shown, keeping the earlier pages', async () => {
    const before = asked.length;
    const body = signBody('acme', secret, { event_type: 'website_dialog', msg_id: 'live-1', from_user_id: 'chatty', content: 'a brand new line' }, Math.floor(Date.now() / 1000));
    const res = await fetch(server.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(res.status, 200);
    await page.waitForSelector('[data-testid=transcript] >> text=a brand new line');
    // The new line and the bot's answer to it, after all 130 earlier lines.
    assert.equal(await lines().count(), LINES + 2);
    assert.ok(asked.slice(before).every((a) => a.beforeId === undefined && a.limit === 50), 'the reload read one page');
    await page.waitForSelector('[data-testid=transcript] >> text=line number 0');
    const transcript = await consoleCall<{ entries: unknown[] }>(server, 'getTranscript', { conversationId: 'long', limit: 50 });
    assert.equal(transcript.entries.length, 50 + 2 - 1, 'the newest page: 49 old lines, the new line and its answer');
  });
});
