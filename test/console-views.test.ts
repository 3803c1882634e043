import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { cli, type ServeProcess } from './helpers/processes.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import { js } from './helpers/console-page.ts';
import { buildConsole, chooseLanguage, CHROMIUM, consoleCall, launchChromium, openConsole, sendAs, SHOTS, startServe, stopServe, waitFor } from './helpers/console-session.ts';
import { addSeedClients, LONG_NICKNAME, seedTraffic, type Seed } from './helpers/console-seed.ts';
import type { DeliveryItem } from '../src/shared/console-api.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

const nav = (page: Page, view: string) => page.click(`nav [data-view="${view}"]`);
const attr = (page: Page, selector: string, name: string) => page.getAttribute(selector, name);

// Page-side code as source text: the tests are type-checked without the DOM library.

/** A datetime-local value in the page's own time zone, `minutes` from now. */
const localInput = (page: Page, minutes: number): Promise<string> =>
  page.evaluate(`(() => {
    const d = new Date(Date.now() + ${minutes} * 60000);
    const p = (n) => String(n).padStart(2, '0');
    return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + 'T' + p(d.getHours()) + ':' + p(d.getMinutes());
  })()`);

/** What scrolls sideways: the document, and every scroll container in it (main scrolls by itself). */
const horizontalOverflow = (page: Page): Promise<string[]> =>
  page.evaluate(`(() => {
    const out = [];
    const doc = document.scrollingElement;
    if (doc.scrollWidth > doc.clientWidth) out.push('document ' + doc.scrollWidth + ' > ' + doc.clientWidth);
    for (const el of document.querySelectorAll('body *')) {
      const overflow = getComputedStyle(el).overflowX;
      if ((overflow !== 'auto' && overflow !== 'scroll') || el.clientWidth === 0) continue;
      if (el.scrollWidth > el.clientWidth + 1) out.push(el.tagName.toLowerCase() + '.' + el.className + ' ' + el.scrollWidth + ' > ' + el.clientWidth);
    }
    return out;
  })()`);

/** Evaluates `expression` in the page with `a` = the focused element. */
const active = (page: Page, expression: string): Promise<unknown> => page.evaluate(`(() => { const a = document.activeElement; return ${expression}; })()`);

describe('the agent workspace views in Chromium', { skip }, () => {
  let browser: Browser;
  let server: ServeProcess;
  let empty: ServeProcess;
  let receiver: Receiver;
  let page: Page;
  let seed: Seed;
  let dataDir: string;

  before(async () => {
    buildConsole();
    mkdirSync(SHOTS, { recursive: true });
    receiver = await startReceiver();
    receiver.respond = () => ({ status: 400 });
    dataDir = mkdtempSync(join(tmpdir(), 'sb-views-'));
    const secrets = addSeedClients(dataDir, receiver.url);
    // The empty console first: its outbox chart has exactly one sample for its first 15 s.
    ({ server: empty } = await startServe());
    ({ server } = await startServe(dataDir));
    browser = await launchChromium();
    seed = await seedTraffic(server, secrets);
    page = await openConsole(browser, server);
    await page.waitForSelector('[data-conversation]');
  });
  after(async () => {
    await browser?.close();
    await stopServe(server);
    await stopServe(empty);
    await receiver?.close();
  });

  it('first run: a single outbox sample gets a time axis around it, not one spanning years', async () => {
    const first = await openConsole(browser, empty);
    await first.waitForSelector('.first-run');
    await nav(first, 'dashboard');
    const chart = '[data-testid="chart-Outbox depth"]';
    await first.waitForSelector(`${chart}[data-x-max]`);
    const min = Number(await attr(first, chart, 'data-x-min'));
    const max = Number(await attr(first, chart, 'data-x-max'));
    const now = Date.now() / 1000;
    assert.ok(max - min > 0 && max - min <= 10 * 15, `x range of ${max - min} s`);
    assert.ok(min <= now && now - 60 <= max, 'the axis is around the sample, which is now');
    // The text alternative names the latest value and its time.
    const table = first.getByRole('table', { name: 'Outbox depth' });
    assert.match((await table.getByRole('row', { name: /^deliveries waiting/ }).textContent()) ?? '', /deliveries waiting\s*0 at \d/);
    await first.close();
  });

  it('first run: add a client, copy endpoint, id and secret in a modal dialog, then a real test message answers', async () => {
    const first = await openConsole(browser, empty);
    await first.waitForSelector('h2:has-text("Welcome to Switchboard")');
    assert.equal(await attr(first, 'nav [data-view="start"]', 'aria-current'), 'page');
    await first.getByRole('textbox', { name: 'New client ID' }).fill('first');
    await first.getByRole('button', { name: 'Add client' }).click();
    const dialog = first.getByRole('dialog', { name: 'Store this secret now' });
    await dialog.waitFor();
    assert.equal(await dialog.getAttribute('aria-modal'), 'true');
    assert.match((await dialog.getByTestId('endpoint-value').textContent()) ?? '', /^http:\/\/127\.0\.0\.1:\d+\/custom-im\/chat-messages$/);
    assert.equal(await dialog.getByTestId('client-id-value').textContent(), 'first');
    assert.match((await dialog.getByTestId('secret-value').textContent()) ?? '', /^[A-Za-z0-9_-]{43}$/);
    const focusInDialog = async () => (await active(first, "a !== null && a.closest('dialog') !== null")) === true;
    assert.ok(await focusInDialog(), 'focus moved into the dialog');
    assert.equal(await active(first, "a.getAttribute('aria-label')"), 'Copy Secret');
    for (let i = 0; i < 6; i++) {
      await first.keyboard.press('Tab');
      assert.ok(await focusInDialog(), `Tab ${i + 1} stays in the dialog`);
    }
    for (let i = 0; i < 6; i++) {
      await first.keyboard.press('Shift+Tab');
      assert.ok(await focusInDialog(), `Shift+Tab ${i + 1} stays in the dialog`);
    }
    for (const name of ['Copy Endpoint', 'Copy Client ID', 'Copy Secret']) await dialog.getByRole('button', { name }).waitFor();
    await first.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    // The add form is gone: the next step has the focus.
    const send = first.getByRole('button', { name: 'Send a test message' });
    assert.equal(await active(first, 'a.textContent'), 'Send a test message');
    assert.equal(await first.getByTestId('start-client-id').textContent(), 'first');
    await send.click();
    await first.waitForSelector('[data-testid=test-response]');
    assert.match((await first.textContent('[data-testid=test-status]')) ?? '', /^HTTP 200 · request_id req_\S+ · \d+ ms$/);
    const body = JSON.parse((await first.textContent('[data-testid=test-body]')) ?? '{}') as { event_type: string; conversation_id: string; reply: { content: string } };
    assert.equal(body.event_type, 'website_dialog');
    assert.ok(body.conversation_id && typeof body.reply.content === 'string');
    await first.screenshot({ path: join(SHOTS, 'first-run-flow.png') });
    await first.getByRole('button', { name: 'Open conversations' }).click();
    await first.waitForSelector(`[data-conversation="${body.conversation_id}"]`);
    await first.close();
  });

  it('the conversation list: options with the selected state, nicknames, relative times with the full date, unread counts, ellipsis', async () => {
    const list = page.getByRole('listbox', { name: 'Conversations' });
    assert.ok((await list.getByRole('option').count()) >= 5);
    const alice = page.locator(`[data-conversation="${seed.conversations.alice}"]`);
    assert.match((await alice.textContent()) ?? '', /Alice Liddell/);
    const time = alice.locator('time');
    const at = Date.parse((await time.getAttribute('datetime')) ?? '');
    assert.ok(Math.abs(Date.now() - at) < 120_000, 'datetime is the last message time');
    assert.match((await time.getAttribute('title')) ?? '', new RegExp(String(new Date(at).getFullYear())));
    assert.match((await time.textContent()) ?? '', /^(just now|\d+ min ago)$/);
    const carol = page.locator(`[data-conversation="${seed.conversations.carol}"]`);
    assert.match((await carol.locator('.badge.unread').textContent()) ?? '', /2 unread messages/);
    const peer = carol.locator('.peer');
    assert.ok(await peer.evaluate((el) => el.scrollWidth > el.clientWidth), 'the long nickname is cut');
    assert.match((await peer.getAttribute('title')) ?? '', new RegExp(LONG_NICKNAME));
    // Selection: exposed as aria-selected, one tab stop, arrows move it.
    await alice.click();
    assert.equal(await alice.getAttribute('aria-selected'), 'true');
    assert.equal(await list.locator('[aria-selected=true]').count(), 1);
    // Newest first: alice wrote first, so she is at the bottom and ArrowUp moves to the row above.
    await page.keyboard.press('ArrowUp');
    // Polled from here: waitForFunction with a text predicate evals it in the page, which the console's CSP refuses.
    await waitFor('the row above focused and selected', () =>
      js<boolean>(
        page,
        `document.activeElement?.getAttribute('data-conversation') !== ${JSON.stringify(seed.conversations.alice)} && document.activeElement?.getAttribute('aria-selected') === 'true'`,
      ),
    );
    assert.equal(await alice.getAttribute('aria-selected'), 'false');
    // Search also finds nicknames and groups.
    const search = page.getByRole('searchbox', { name: 'Search messages, names, IDs (/)' });
    // The placeholder shows whole (it was cut after "groups"), here and in the list column at its narrowest.
    const cut = () =>
      js<number>(
        page,
        `(() => { const box = document.querySelector('.filters input[type=search]'); const s = getComputedStyle(box);
          const ctx = document.createElement('canvas').getContext('2d'); ctx.font = s.font;
          const room = box.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
          return Math.ceil(ctx.measureText(box.placeholder).width - room); })()`,
      );
    assert.ok((await cut()) <= 0, `placeholder overflows by ${await cut()} px`);
    await js(page, `document.querySelector('.app').style.setProperty('--list-width', '280px')`);
    assert.ok((await cut()) <= 0, `at 280 px the placeholder overflows by ${await cut()} px`);
    await js(page, `document.querySelector('.app').style.removeProperty('--list-width')`);
    await search.fill('Liddell');
    await page.waitForSelector(`[data-conversation="${seed.conversations.bob}"]`, { state: 'detached' });
    await alice.waitFor();
    await search.fill('');
    await page.locator(`[data-conversation="${seed.conversations.bob}"]`).waitFor();
  });

  it('j/k keep the selection scrolled into view in a long list', async () => {
    for (let i = 0; i < 40; i++) {
      await sendAs(server, 'acme', seed.acme, { event_type: 'website_dialog', msg_id: `scroll-${i}`, from_user_id: `visitor-${String(i).padStart(2, '0')}`, content: 'Where is my parcel?' });
    }
    await page.waitForSelector('[data-conversation]:has-text("visitor-39")');
    await page.click('[data-conversation]:has-text("visitor-39")');
    await page.click('h1');
    for (let i = 0; i < 35; i++) await page.keyboard.press('j');
    const selected = page.locator('[role=option][aria-selected=true]');
    await selected.waitFor();
    const inView = await selected.evaluate((el) => {
      const box = el.getBoundingClientRect();
      const scroller = el.closest('[data-testid=conversation-list]')!.getBoundingClientRect();
      return box.top >= scroller.top - 1 && box.bottom <= scroller.bottom + 1;
    });
    assert.ok(inView, 'the selected row is visible');
    assert.doesNotMatch((await selected.textContent()) ?? '', /visitor-39/);
  });

  it('needs you: handed-off conversations, longest wait first, with how long each waited and a count in the nav', async () => {
    // bob and carol were handed off; alice's reply died at acme's receiver, so she got nothing either.
    const button = page.getByRole('button', { name: /^Needs you.*3 conversations waiting/ });
    assert.equal(await page.textContent('[data-testid=needs-you-count]'), '3');
    await button.click();
    assert.equal(await button.getAttribute('aria-current'), 'page');
    assert.equal(await attr(page, 'nav [data-view="conversations"]', 'aria-current'), null);
    await page.waitForSelector('[data-testid=needs-you] [data-conversation]');
    const order = await page.$$eval('[data-testid=needs-you] [data-conversation]', (rows) => rows.map((r) => r.getAttribute('data-conversation')));
    assert.deepEqual(order.filter((id) => id !== seed.conversations.alice), [seed.conversations.bob, seed.conversations.carol]);
    assert.ok(order.includes(seed.conversations.alice));
    const waited = page.locator(`[data-testid=needs-you] [data-conversation="${seed.conversations.bob}"] time`);
    assert.match((await waited.textContent()) ?? '', /^waiting (under a minute|\d+ min)$/);
    assert.ok(Date.parse((await waited.getAttribute('datetime')) ?? '') <= Date.now());
    await page.screenshot({ path: join(SHOTS, 'needs-you-flow.png') });
    await page.click(`[data-testid=needs-you] [data-conversation="${seed.conversations.carol}"]`);
    await page.waitForSelector(`[role=option][aria-selected=true][data-conversation="${seed.conversations.carol}"]`);
    assert.equal(await attr(page, 'nav [data-view="conversations"]', 'aria-current'), 'page');
  });

  it('deliveries: retrying and dead across conversations, filtered by client and state, retry one and all dead', async () => {
    await nav(page, 'deliveries');
    await page.waitForSelector('[data-testid=deliveries] tbody tr.dead');
    await page.waitForSelector('[data-testid=deliveries] tbody tr.retrying');
    const chip = (name: string) => page.getByRole('group', { name: 'States' }).getByRole('button', { name });
    assert.equal(await chip('Retrying').getAttribute('aria-pressed'), 'true');
    assert.equal(await chip('Dead').getAttribute('aria-pressed'), 'true');
    await chip('Retrying').click();
    await page.waitForSelector('[data-testid=deliveries] tbody tr.retrying', { state: 'detached' });
    assert.equal(await chip('Retrying').getAttribute('aria-pressed'), 'false');
    await chip('Retrying').click();
    await page.getByRole('combobox', { name: 'Client' }).selectOption('shop');
    await page.waitForSelector('[data-testid=deliveries] tbody tr.dead', { state: 'detached' });
    await page.getByRole('combobox', { name: 'Client' }).selectOption('');
    // Retry one dead delivery: a retry is sent under the operator's name, asked for first; the
    // receiver gets it again (and refuses it again), and the status line says so.
    const dead = page.locator('[data-testid=deliveries] tbody tr.dead').first();
    const id = Number(await dead.getAttribute('data-delivery'));
    const before = receiver.received.length;
    await dead.getByRole('button', { name: 'Retry' }).click();
    const who = page.locator('[data-testid=operator-dialog]');
    await who.locator('input[autocomplete=username]').fill('ann');
    await who.locator('input[autocomplete=name]').fill('Ann Lee');
    await who.getByRole('button', { name: 'Save' }).click();
    await waitFor('the retried delivery to reach the receiver', async () => receiver.received.length > before);
    await waitFor('the delivery to be dead again', async () => (await consoleCall<DeliveryItem[]>(server, 'listDeliveries', {})).find((d) => d.id === id && d.state === 'dead'));
    await page.waitForSelector('[role=status]:has-text("Retried 1: 1 failed again (HTTP 400)")');
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.waitForSelector(`[data-testid=deliveries] tr.dead[data-delivery="${id}"]`);
    const again = receiver.received.length;
    await page.getByRole('button', { name: /^Retry all dead \(1\)$/ }).click();
    await waitFor('retry all to reach the receiver', async () => receiver.received.length > again);
    await page.waitForSelector('[role=status]:has-text("Retried 1: 1 failed again (HTTP 400)")');
    await page.screenshot({ path: join(SHOTS, 'deliveries-flow.png') });
    // Each row links to its conversation.
    await page.locator(`[data-testid=deliveries] tr[data-delivery="${id}"]`).getByRole('button', { name: 'Alice Liddell' }).click();
    await page.waitForSelector(`[role=option][aria-selected=true][data-conversation="${seed.conversations.alice}"]`);
  });

  it('dashboard tiles open their filtered lists; charts have a text alternative', async () => {
    await nav(page, 'dashboard');
    await page.getByTestId('tile-dead').click();
    await page.waitForSelector('h2:has-text("Deliveries")');
    const chip = (name: string) => page.getByRole('group', { name: 'States' }).getByRole('button', { name });
    assert.equal(await chip('Dead').getAttribute('aria-pressed'), 'true');
    assert.equal(await chip('Retrying').getAttribute('aria-pressed'), 'false');
    assert.equal(await attr(page, 'nav [data-view="deliveries"]', 'aria-current'), 'page');
    await nav(page, 'dashboard');
    await page.getByTestId('tile-pending').click();
    await page.waitForSelector('h2:has-text("Deliveries")');
    assert.equal(await chip('Retrying').getAttribute('aria-pressed'), 'true');
    assert.equal(await chip('Dead').getAttribute('aria-pressed'), 'false');
    await page.waitForSelector('[data-testid=deliveries] tbody tr.retrying');
    await nav(page, 'dashboard');
    await page.getByTestId('tile-needs-human').click();
    await page.waitForSelector('h2:has-text("Needs you")');
    await nav(page, 'dashboard');
    const table = page.getByRole('table', { name: 'Requests per minute' });
    const accepted = table.getByRole('row', { name: /^accepted/ });
    assert.match((await accepted.textContent()) ?? '', /accepted\d+ at \d/);
  });

  it('request log: request_id, msg_id, client and time filters, field errors, a link to the conversation', async () => {
    await nav(page, 'requests');
    const rows = page.locator('[data-testid=request-log] tbody tr');
    await page.getByRole('searchbox', { name: 'request_id' }).fill(seed.invalidRequestId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForSelector(`[data-request="${seed.invalidRequestId}"]`);
    await waitFor('one row', async () => (await rows.count()) === 1);
    const errors = page.getByRole('list', { name: 'Field errors' });
    assert.match((await errors.textContent()) ?? '', /message_info\.from_user_type/);
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByRole('searchbox', { name: 'msg_id' }).fill('seed-bob');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await waitFor('only bob', async () => (await rows.count()) === 1 && /seed-bob/.test((await rows.first().textContent()) ?? ''));
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByRole('combobox', { name: 'Client' }).selectOption('shop');
    await waitFor('only shop', async () => {
      const clients = await rows.locator('td:nth-child(2)').allTextContents();
      return clients.length > 0 && clients.every((c) => c === 'shop');
    });
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.locator('input[type=datetime-local]').first().fill(await localInput(page, -24 * 60));
    await page.locator('input[type=datetime-local]').nth(1).fill(await localInput(page, -60));
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForSelector('text=No request matches these filters.');
    await page.locator('input[type=datetime-local]').nth(1).fill(await localInput(page, 5));
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForSelector('[data-testid=request-log]');
    await page.screenshot({ path: join(SHOTS, 'requests-flow.png') });
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByRole('searchbox', { name: 'msg_id' }).fill('seed-dave');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await waitFor('only dave', async () => (await rows.count()) === 1 && /seed-dave/.test((await rows.first().textContent()) ?? ''));
    // The row names the conversation as the list does (dave sent no nickname: his id), not by its opaque id.
    const link = page.getByRole('button', { name: 'Open conversation dave', exact: true });
    assert.equal(await link.textContent(), 'dave');
    await link.click();
    await page.waitForSelector(`[role=option][aria-selected=true][data-conversation="${seed.conversations.dave}"]`);
  });

  it('the secret dialog of a rotation gives focus back to the button that opened it', async () => {
    await nav(page, 'clients');
    const rotate = page.locator('[data-client="shop"]').getByRole('button', { name: 'Rotate secret' });
    await rotate.click();
    await page.getByRole('dialog').waitFor();
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    assert.equal(await active(page, 'a.textContent'), 'Rotate secret', 'focus is back on "Rotate secret"');
    assert.ok(await rotate.evaluate((el) => el.matches(':focus')));
  });

  it('knowledge base: a table with header cells, opened at an entry (a source of an answer) that is shown and focused', async () => {
    const entries = Array.from({ length: 40 }, (_, i) => ({ question: `Filler question number ${i}?`, answer: `Filler answer ${i}.` }));
    entries.push({ question: 'Do you deliver to Iceland?', answer: 'Yes, within 7 days.' });
    const file = join(dataDir, 'kb.json');
    writeFileSync(file, JSON.stringify(entries));
    assert.equal(cli(dataDir, 'kb', 'import', file).status, 0);
    await nav(page, 'kb');
    for (const name of ['Question', 'Answer', 'Actions']) await page.getByRole('columnheader', { name }).waitFor();
    // A search that hides the entry: opening it must show it anyway.
    await page.getByRole('searchbox', { name: 'Search the knowledge base' }).fill('parcel');
    await page.waitForSelector('td:has-text("Do you deliver to Iceland?")', { state: 'detached' });
    await page.getByRole('textbox', { name: 'Try a question…' }).fill('do you deliver to iceland');
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    await page.getByRole('button', { name: /Do you deliver to Iceland\?/ }).click();
    const row = page.locator('[data-testid=kb-table] tr[aria-current=true]');
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /Do you deliver to Iceland\?/);
    assert.ok(await row.evaluate((el) => el.matches(':focus')), 'the entry has the focus');
    assert.ok(await row.isVisible());
    assert.equal(await page.getByRole('searchbox', { name: 'Search the knowledge base' }).inputValue(), '');
  });

  it('a favicon, served by the console', async () => {
    const href = await page.getAttribute('link[rel=icon]', 'href');
    const r = await fetch(new URL(href ?? '', server.consoleBase));
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /image\/svg\+xml/);
  });

  it('<html lang> follows the chosen language; relative times are translated', async () => {
    await nav(page, 'conversations');
    await chooseLanguage(page, 'zh-CN');
    assert.equal(await page.evaluate('document.documentElement.lang'), 'zh-CN');
    await page.waitForSelector('nav [data-view="needs_you"]:has-text("待处理")');
    assert.match((await page.locator('[role=option] time').first().textContent()) ?? '', /^(刚刚|\d+ 分钟前)$/);
    assert.equal(await page.getByRole('searchbox').getAttribute('placeholder'), '搜索消息、昵称、ID (/)');
    await chooseLanguage(page, 'en');
    assert.equal(await page.evaluate('document.documentElement.lang'), 'en');
  });

  it('every view is usable at 1024×700 without horizontal scrolling, in English and Chinese', async () => {
    const small = await openConsole(browser, server, { width: 1024, height: 700 });
    await small.waitForSelector('[data-conversation]');
    const problems: string[] = [];
    for (const lang of ['en', 'zh-CN'] as const) {
      await chooseLanguage(small, lang);
      const check = async (view: string) => {
        for (const p of await horizontalOverflow(small)) problems.push(`${view} (${lang}): ${p}`);
        await small.screenshot({ path: join(SHOTS, `1024-${view}-${lang}.png`) });
      };
      await nav(small, 'conversations');
      // The longest name, found by its nickname (the list is virtualized: rows far down are not rendered).
      await small.getByRole('searchbox').fill('Carolina');
      await small.click(`[data-conversation="${seed.conversations.carol}"]`);
      await small.waitForSelector('[data-testid=why]');
      await check('conversations');
      for (const [view, ready] of [
        ['needs_you', '[data-testid=needs-you]'],
        ['deliveries', '[data-testid=deliveries]'],
        ['dashboard', '.chart canvas'],
        ['requests', '[data-testid=request-log]'],
        ['clients', '[data-client="acme"]'],
        ['kb', '[data-testid=kb-table]'],
      ] as const) {
        await nav(small, view);
        await small.waitForSelector(ready);
        if (view === 'clients') await small.locator('[data-client="acme"]').getByRole('button', { name: /Reply settings|回复设置/ }).click();
        await check(view);
      }
    }
    await small.close();
    const first = await openConsole(browser, empty, { width: 1024, height: 700 });
    await first.waitForSelector('[data-conversation]');
    for (const p of await horizontalOverflow(first)) problems.push(`empty console: ${p}`);
    await first.close();
    assert.deepEqual(problems, []);
  });
});
