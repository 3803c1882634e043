import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { Browser, Page } from '@playwright/test';
import type { ServeProcess } from './helpers/processes.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import { buildConsole, CHROMIUM, consoleCall, launchChromium, openConsole, openHeaderPrefs, startServe, stopServe, waitFor } from './helpers/console-session.ts';
import { js } from './helpers/console-page.ts';
import { addSeedClients, seedTraffic, type Seed } from './helpers/console-seed.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
const nav = (page: Page, view: string) => page.click(`nav [data-view="${view}"]`);
// Page-side code as source text: the tests are type-checked without the DOM library.
const inPage = <T>(page: Page, source: string): Promise<T> => page.evaluate(source) as Promise<T>;

/**
 * The console's layout and its times, in Chromium: labels kept whole, lines centred, a header of
 * one row at every width, one clock format, one time axis for every chart.
 */
describe('console layout and times: whole labels, centred lines, a one-row header, one clock format, one chart axis', { skip }, () => {
  let browser: Browser;
  let server: ServeProcess;
  let receiver: Receiver;
  let page: Page;
  let seed: Seed;
  let startedAt: number;

  before(async () => {
    buildConsole();
    receiver = await startReceiver();
    receiver.respond = () => ({ status: 400 });
    startedAt = Date.now() / 1000;
    const started = await startServe();
    server = started.server;
    seed = await seedTraffic(server, addSeedClients(started.dataDir, receiver.url));
    // The header's operator button is checked by name, so one is set before the page opens.
    await consoleCall(server, 'setOperator', { id: 'ann', name: 'Ann Lee' });
    browser = await launchChromium();
    page = await openConsole(browser, server);
    await page.waitForSelector('[data-conversation]');
  });
  after(async () => {
    await browser?.close();
    await stopServe(server);
    await receiver?.close();
  });

  it('a list row with badges still shows its whole channel label', async () => {
    await page.waitForSelector('.conv .badge.warn');
    const cut = await inPage<string[]>(
      page,
      `[...document.querySelectorAll('.conv')].filter((row) => row.querySelector('.badges .badge')).map((row) => {
        const label = row.querySelector('[data-testid=conversation-channel]');
        if (!label) return row.dataset.conversation + ': no channel label';
        const peer = row.getBoundingClientRect();
        const box = label.getBoundingClientRect();
        return box.width > 0 && box.right <= peer.right + 0.5 && label.scrollWidth <= label.clientWidth + 1 && /(IM|Web)$/.test(label.textContent) ? '' : row.dataset.conversation + ': ' + label.textContent;
      }).filter(Boolean)`,
    );
    assert.deepEqual(cut, []);
  });

  it('request log and deliveries show times as the rest of the console does (no seconds), full date on hover', async () => {
    await nav(page, 'requests');
    const cell = page.locator('[data-testid=request-log] tbody tr td:first-child time').first();
    await cell.waitFor();
    assert.match((await cell.textContent()) ?? '', /^\d{1,2}:\d{2}(\s?[AP]M)?(–\d{1,2}:\d{2}(\s?[AP]M)?)?$/);
    assert.match((await cell.getAttribute('title')) ?? '', /\d{4}/);
    await nav(page, 'deliveries');
    const next = page.locator('[data-testid=deliveries] tbody tr.retrying time').first();
    await next.waitFor();
    assert.doesNotMatch((await next.textContent()) ?? '', /\d:\d{2}:\d{2}/);
    assert.match((await next.getAttribute('title')) ?? '', /\d{4}/);
  });

  it('the request log keeps its last header inside its cell, clear of the right edge', async () => {
    await nav(page, 'requests');
    await page.waitForSelector('[data-testid=request-log] thead th:last-child');
    const gap = await inPage<number>(
      page,
      `(() => {
        const th = document.querySelector('[data-testid=request-log] thead th:last-child');
        const range = document.createRange();
        range.selectNodeContents(th);
        return th.getBoundingClientRect().right - range.getBoundingClientRect().right;
      })()`,
    );
    assert.ok(gap >= 8, `the header text ends ${gap} px from its cell's right edge`);
  });

  it('stop and resume lines in the transcript are centred, label and text alike', async () => {
    await consoleCall(server, 'setOperator', { id: 'ann', name: 'Ann Lee' });
    await consoleCall(server, 'stopAutoReply', { conversationId: seed.conversations.alice });
    await consoleCall(server, 'resumeAutoReply', { conversationId: seed.conversations.alice });
    await nav(page, 'conversations');
    await page.click(`[data-conversation="${seed.conversations.alice}"]`);
    await page.waitForSelector('.entry.command');
    const offsets = await inPage<number[]>(
      page,
      `[...document.querySelectorAll('.entry.command')].flatMap((li) => {
        const centre = (el) => { const r = document.createRange(); r.selectNodeContents(el); const b = r.getBoundingClientRect(); return (b.left + b.right) / 2; };
        const list = li.parentElement.getBoundingClientRect();
        const mid = (list.left + list.right) / 2;
        return [centre(li.querySelector('.meta')) - mid, centre(li.querySelector('.content')) - mid];
      })`,
    );
    assert.ok(offsets.length >= 4);
    for (const off of offsets) assert.ok(Math.abs(off) <= 2, `a command line is ${off} px off centre`);
  });

  it('the header is one row at 1280×800 and at 1024×700, with no sideways scroll', async () => {
    const layout = () =>
      js<{ rows: number; sideways: boolean; hidden: string[] }>(
        page,
        `(() => { const kids = [...document.querySelector('header.top').children].filter((k) => !k.classList.contains('endpoint') && k.checkVisibility());
          const middles = kids.map((k) => { const r = k.getBoundingClientRect(); return (r.top + r.bottom) / 2; });
          return { rows: Math.max(...middles) - Math.min(...middles) < 16 ? 1 : 2, sideways: document.documentElement.scrollWidth > document.documentElement.clientWidth,
            hidden: kids.filter((k) => { const r = k.getBoundingClientRect(); return r.width === 0 || r.right > innerWidth; }).map((k) => k.outerHTML.slice(0, 60)) }; })()`,
      );
    assert.deepEqual(await layout(), { rows: 1, sideways: false, hidden: [] });
    // Every button in the row says what it does in words (four were icons only: a bell, a speaker, "?", a moon).
    const wordless = () =>
      js<string[]>(
        page,
        `[...document.querySelectorAll('header.top button')].filter((b) => b.checkVisibility() && !/\\p{L}{2}/u.test(b.innerText)).map((b) => b.outerHTML.slice(0, 80))`,
      );
    assert.deepEqual(await wordless(), []);
    // Folded at 1280 px, the settings open from a button that says "Settings", each switch with its words.
    const folded = await openHeaderPrefs(page);
    for (const name of ['Enable alerts', 'Sound', 'Shortcuts', 'Dark theme']) {
      const button = page.getByRole('button', { name, exact: true });
      assert.equal(await button.count(), 1, name);
      assert.equal((await button.innerText()).trim(), name, `${name} in words`);
    }
    assert.deepEqual(await wordless(), [], 'and in the open menu');
    if (folded) await page.keyboard.press('Escape');
    await page.setViewportSize({ width: 1024, height: 700 });
    // At 1024 the operator shows as an avatar: the name stays in its tooltip and accessible name.
    // (A fold, if the row needs one, follows the resize in the next frame.)
    await waitFor('one header row at 1024 px', async () => (await layout()).rows === 1);
    assert.deepEqual(await layout(), { rows: 1, sideways: false, hidden: [] });
    const operator = page.locator('header.top [data-testid=operator]');
    assert.match((await operator.getAttribute('title')) ?? '', /Ann/);
    assert.equal(await page.getByRole('button', { name: /^Ann/ }).count(), 1, 'the operator button is still named');
    assert.equal(await page.getByRole('heading', { level: 1, name: 'Switchboard' }).count(), 1, 'the product name stays for screen readers');
    // Where the alert switch is down to its bell, its words are still its name and tooltip.
    const bell = page.locator('header.top .alert-controls button');
    assert.equal(await bell.getAttribute('title'), 'Enable alerts');
    assert.equal(await page.getByRole('button', { name: 'Enable alerts', exact: true }).count(), 1);
    await page.setViewportSize({ width: 1680, height: 900 });
    await waitFor('no "Settings" menu when everything fits', async () => !(await page.locator('header.top .more-prefs').isVisible()));
    assert.deepEqual(await wordless(), []);
    for (const name of ['Sound', 'Shortcuts', 'Dark theme']) assert.equal((await page.getByRole('button', { name, exact: true }).innerText()).trim(), name);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('all dashboard charts share one time axis that starts when the server did, not an hour ago', async () => {
    await nav(page, 'dashboard');
    const charts = page.locator('figure.chart[data-x-max]');
    await waitFor('three charts', async () => (await charts.count()) === 3);
    const ranges = await inPage<Array<[number, number]>>(page, `[...document.querySelectorAll('figure.chart')].map((f) => [Number(f.dataset.xMin), Number(f.dataset.xMax)])`);
    const [first] = ranges;
    for (const r of ranges) assert.deepEqual(r, first, 'the same x range on every chart');
    // A server up for seconds gets a two-minute axis (sharedRange's shortest), not the hour's window.
    assert.ok(first![0] >= startedAt - 150, `the axis starts ${Math.round(startedAt - first![0])} s before the server did`);
    assert.ok(first![1] >= Date.now() / 1000 - 60, 'the axis reaches now');
    // The text alternative is still there.
    await page.getByRole('table', { name: 'Outbox depth' }).waitFor({ state: 'attached' });
  });
});
