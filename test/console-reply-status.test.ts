import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { buildConsole, chooseLanguage, CHROMIUM, closeConsole, consoleCall, consoleOnList, listRow, openConversation, sendAs, startServe, waitFor } from './helpers/console-session.ts';
import { js } from './helpers/console-page.ts';
import type { DeliveryItem } from '../src/shared/console-api.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

/** acme's replies go to a port that refuses connections: they are made, then retried, never sent. */
const ACME_URL = 'http://127.0.0.1:9/a/very/long/path/to/the/receiver/hook?token=secret-token';

/**
 * What the console says about replies and their state, as an agent sees it in Chromium at
 * 1280×800: why-lines of replies cancelled by a stop, stop and resume lines and previews, the
 * Paused badge, cancelled deliveries, a web chat with no send_url, the reply settings' help.
 */
describe('reply status in the console: why-lines, stops and pauses, cancelled deliveries, no send_url, reply settings', { skip }, () => {
  let server: ServeProcess;
  let browser: Browser;
  let page: Page;
  const secrets: Record<string, string> = {};
  const send = (client: string, info: Record<string, unknown>) => sendAs(server, client, secrets[client]!, info);
  const row = (who: string) => listRow(page, who);
  const open = (who: string): Promise<void> => openConversation(page, who);
  const blur = () => js(page, 'document.activeElement && document.activeElement.blur()');

  before(async () => {
    buildConsole();
    const dir = mkdtempSync(join(tmpdir(), 'sb-reply-status-'));
    secrets['acme'] = secretFrom(cli(dir, 'clients', 'add', 'acme', '--send-url', ACME_URL, '--bound-account', 'bot-acme').stdout);
    secrets['site'] = secretFrom(cli(dir, 'clients', 'add', 'site').stdout);
    cli(dir, 'kb', 'add', '--question', 'Where is my parcel?', '--answer', 'Track it with the link in your confirmation email.');
    ({ server } = await startServe(dir));
    await consoleCall(server, 'setOperator', { id: 'ann', name: 'Ann Lee' });
    await send('acme', { event_type: 'auto_dialog', msg_id: 'rv-alice', from_user_id: 'alice', from_user_type: 2, content: 'Where is my parcel?', nickname: 'Alice Chen' });
    await send('acme', { event_type: 'auto_dialog', msg_id: 'rv-bob', from_user_id: 'bob', from_user_type: 2, content: 'Where is my parcel?' });
    await waitFor('both replies made and retrying', async () => (await consoleCall<DeliveryItem[]>(server, 'listDeliveries', {})).filter((d) => d.state === 'retrying').length === 2);
    await send('site', { event_type: 'website_dialog', msg_id: 'rv-web', from_user_id: 'visitor-9', content: 'Can I pay with seashells?' });
    ({ browser, page } = await consoleOnList(server));
  });
  after(async () => {
    await closeConsole(browser, server);
  });

  it('a reply made but cancelled by a stop is not "answered" in green: the why-line says it was not delivered', async () => {
    await open('Alice Chen');
    const answered = page.locator('[data-entry="rv-alice"] [data-testid=why][data-outcome=answered]');
    await answered.waitFor();
    // One state, not two: it read "Scheduled for a reply · reply made, not delivered yet: …".
    assert.match((await answered.textContent()) ?? '', /^Bot reply not delivered yet: retrying after \d+ failed attempts?/);
    await blur();
    await page.keyboard.press('s');
    const why = page.locator('[data-entry="rv-alice"] [data-testid=why][data-delivery=cancelled]');
    await why.waitFor();
    assert.equal(
      await why.textContent(),
      'Bot reply not delivered: cancelled (auto-reply stopped by the console)',
    );
    const colours = await js<{ why: string; ok: string }>(
      page,
      `(() => { const probe = document.createElement('span'); probe.style.color = 'var(--ok)'; document.body.append(probe);
        const ok = getComputedStyle(probe).color; probe.remove();
        return { why: getComputedStyle(document.querySelector('[data-entry="rv-alice"] [data-testid=why]')).color, ok }; })()`,
    );
    assert.notEqual(colours.why, colours.ok, 'not green');
  });

  it('a resume leaves its line in the transcript, and the list previews stops and resumes in words, in English and Chinese', async () => {
    const preview = () => row('Alice Chen').locator('.last').textContent();
    await waitFor('the stop in the preview', async () => (await preview()) === 'Auto-reply stopped from the console by Ann Lee');
    await blur();
    await page.keyboard.press('r');
    await page.waitForSelector('[data-testid=transcript] .entry.command >> text=Auto-reply resumed from the console by Ann Lee');
    await waitFor('the resume in the preview', async () => (await preview()) === 'Auto-reply resumed from the console by Ann Lee');
    const when = await page.locator('[data-testid=transcript] .entry.command').last().locator('time').getAttribute('datetime');
    assert.ok(Math.abs(Date.parse(when ?? '') - Date.now()) < 60_000, 'the line says when');
    await chooseLanguage(page, 'zh-CN');
    await waitFor('the preview in Chinese', async () => (await preview()) === 'Ann Lee 已在控制台恢复自动回复');
    await page.waitForSelector('[data-testid=transcript] .entry.command >> text=Ann Lee 已在控制台停止自动回复');
    await chooseLanguage(page, 'en');
  });

  it('a staff line carries no "not answered" why-line; the Paused badge says until when', async () => {
    await send('acme', { event_type: 'auto_dialog', msg_id: 'rv-staff', from_user_id: 'bot-acme', from_user_type: 1, to_user_id: 'alice', content: 'Hi Alice, I am looking into it.' });
    await page.waitForSelector('[data-entry="rv-staff"]');
    assert.equal(await page.locator('[data-entry="rv-staff"] [data-testid=why]').count(), 0);
    assert.equal(await page.locator('[data-entry="rv-staff"]').getByText('not a customer').count(), 0);
    const badge = page.locator('[data-testid=auto-reply-state]');
    // Its time, with the date when the pause ends on another day (a run just before midnight).
    await waitFor('the pause in the header', async () => /^Paused until ([A-Z][a-z]{2} \d{1,2}, )?\d\d:\d\d( [AP]M)?$/.test((await badge.textContent()) ?? ''));
    const until = Number(await badge.getAttribute('data-until'));
    assert.ok(until > Date.now() + 9 * 60_000 && until <= Date.now() + 10 * 60_000, 'ten minutes after the staff message');
    assert.match((await badge.getAttribute('title')) ?? '', /auto-reply is paused until .+, then resumes by itself/);
    const listBadge = row('Alice Chen').locator('.badge.paused');
    assert.match((await listBadge.getAttribute('title')) ?? '', /paused until/);
  });

  it('the list\'s time column lines up on rows with and without badges', async () => {
    await open('bob'); // reads bob's message: his row has no badge left
    await waitFor('a row without badges', async () => (await row('bob').locator('.badge').count()) === 0);
    const edges = await js<Array<{ right: number; badges: number }>>(
      page,
      // Where the time's text ends, not its box: a grid cell can stretch the box while the text sits at its left.
      `[...document.querySelectorAll('[data-conversation]')].map((r) => { const text = document.createRange(); text.selectNodeContents(r.querySelector('.when'));
        return { right: Math.round(text.getBoundingClientRect().right), badges: r.querySelectorAll('.badge').length }; })`,
    );
    assert.ok(edges.some((e) => e.badges === 0) && edges.some((e) => e.badges > 0), JSON.stringify(edges));
    assert.equal(new Set(edges.map((e) => e.right)).size, 1, `one right edge for every time: ${JSON.stringify(edges)}`);
  });

  it('deliveries show their target URL, short with the whole on hover, and the cancelled ones with why', async () => {
    await page.click('nav [data-view="deliveries"]');
    const bob = page.locator('[data-testid=deliveries] tbody tr.retrying');
    await bob.waitFor();
    const url = bob.locator('[data-testid=delivery-url]');
    // The whole URL on hover, its query's values masked (a token once showed in the tooltip).
    assert.equal(await url.getAttribute('title'), ACME_URL.replace('secret-token', '…'));
    const shown = (await url.textContent()) ?? '';
    assert.ok(shown.startsWith('127.0.0.1:9/a/very') && shown.length <= 48 && !shown.includes('secret-token'), shown);
    assert.match((await page.locator('[data-testid=deliveries] thead').textContent()) ?? '', /Target \(send_url\)/);
    assert.equal(await page.locator('[data-testid=deliveries] tbody tr.cancelled').count(), 0, 'cancelled ones only on request');
    const cancelled = page.getByRole('group', { name: 'States' }).getByRole('button', { name: 'Cancelled' });
    await cancelled.click();
    assert.equal(await cancelled.getAttribute('aria-pressed'), 'true');
    const alice = page.locator('[data-testid=deliveries] tbody tr.cancelled');
    await alice.waitFor();
    assert.equal(await alice.locator('[data-testid=delivery-problem]').textContent(), 'auto-reply stopped by the console');
    assert.match((await alice.textContent()) ?? '', /Cancelled.*Alice Chen.*acme.*AI reply/);
    // Turning every state off goes back to what needs attention.
    for (const name of ['Retrying', 'Dead', 'Cancelled']) await page.getByRole('group', { name: 'States' }).getByRole('button', { name }).click();
    await alice.waitFor({ state: 'detached' });
    await bob.waitFor();
  });

  it('a web handoff with no send_url says in Needs you and in the conversation why there is no reply box and what to do', async () => {
    await page.click('nav [data-view="needs_you"]');
    const queued = page.locator('[data-testid=needs-you] [data-conversation]:has-text("visitor-9")');
    await queued.waitFor();
    const tag = queued.locator('[data-testid=no-send-tag]');
    assert.equal(await tag.textContent(), 'no send_url: cannot reply');
    assert.match((await tag.getAttribute('title')) ?? '', /Client site has no default send_url/);
    await queued.click();
    const note = page.locator('[data-testid=no-send][data-code=no_send_url]');
    await note.waitFor();
    // The agent reads one line: what they can do now. The admin's fix (settings, the command line) is folded away.
    assert.equal(
      await note.getByTestId('no-send-line').textContent(),
      'You cannot reply to this visitor from here. Answer them another way, then Resolve to take this conversation out of Needs you.',
    );
    const admin = note.getByTestId('no-send-admin');
    assert.equal(await admin.getAttribute('open'), null, 'the admin details start folded');
    assert.equal(await note.getByText(/npm run cli/).isVisible(), false, 'no command line shown to the agent');
    assert.equal(await page.getByRole('textbox', { name: 'Reply to the customer' }).count(), 0);
    await admin.getByText('For an admin: how to make replies possible here').click();
    const details = (await admin.textContent()) ?? '';
    assert.match(details, /A website visitor gets answers only in the response to the messages their widget sends/);
    assert.match(details, /npm run cli -- clients set site --send-url URL/);
    assert.match(details, /The bot still answers the visitor's next message in the website chat/);
    assert.equal(await note.getByText(/npm run cli/).isVisible(), true);
    // The way out: the client's settings, where a default send_url makes the reply box appear.
    await note.getByRole('button', { name: 'Set a default send_url for site' }).click();
    const form = page.getByRole('form', { name: 'Reply settings of site' });
    await form.waitFor();
    assert.equal(await js(page, `document.querySelector('form[aria-label="Reply settings of site"]').contains(document.activeElement)`), true, 'the form has the keyboard');
    await form.getByLabel('Default send_url').fill('http://127.0.0.1:9/site-hook');
    await form.getByRole('button', { name: 'Save settings' }).click();
    await form.getByRole('button', { name: 'Saved' }).waitFor();
    await page.click('nav [data-view="needs_you"]');
    await waitFor('the tag gone', async () => (await queued.locator('[data-testid=no-send-tag]').count()) === 0);
    await queued.click();
    await page.getByRole('textbox', { name: 'Reply to the customer' }).waitFor();
  });

  it('each reply setting says what it does, which chats it applies to and what empty means', async () => {
    await page.click('nav [data-view="clients"]');
    const client = page.locator('[data-client="acme"]');
    await client.getByRole('button', { name: 'Reply settings' }).click();
    const form = page.getByRole('form', { name: 'Reply settings of acme' });
    const described = async (name: string) => js(page, `(() => {
      const label = [...document.querySelectorAll('form[aria-label="Reply settings of acme"] label')].find((l) => l.querySelector('span')?.textContent === ${JSON.stringify(name)});
      const field = label.querySelector('input, select');
      return document.getElementById(field.getAttribute('aria-describedby'))?.textContent ?? null;
    })()`);
    await form.waitFor();
    assert.match(String(await described('Fallback text')), /Empty: IM sends nothing; a web visitor gets the service's default/);
    assert.match(String(await described('Quiet period (s)')), /IM only; empty: 2\./);
    assert.match(String(await described('Engine')), /every kind of message/);
  });
});
