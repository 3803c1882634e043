import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { buildConsole, chooseLanguage, CHROMIUM, consoleCall, launchChromium, listRow, openConsole, openConversation, sendAs, startServe, stopServe, waitFor } from './helpers/console-session.ts';
import { js } from './helpers/console-page.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import type { ConsoleOutputs, DeliveryItem } from '../src/shared/console-api.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

type Transcript = ConsoleOutputs['getTranscript'];

/**
 * The second support-agent review of the operator console: each finding checked as the agent
 * sees it, in Chromium against a real serve, at 1280×800 unless said otherwise.
 */
describe('the second support-agent review of the console', { skip }, () => {
  let server: ServeProcess;
  let browser: Browser;
  let page: Page;
  let ok: Receiver;
  let failing: Receiver;
  let gone: Receiver;
  const secrets: Record<string, string> = {};
  const send = (client: string, info: Record<string, unknown>) => sendAs(server, client, secrets[client]!, info);
  const row = listRow;
  const open = (who: string): Promise<void> => openConversation(page, who);
  const replied = (customer: string) =>
    waitFor(`${customer}'s reply`, async () => {
      const list = await consoleCall<{ items: Array<{ id: string; customerId: string | null }> }>(server, 'listConversations', { limit: 50 });
      const c = list.items.find((x) => x.customerId === customer);
      if (!c) return false;
      const t = await consoleCall<Transcript>(server, 'getTranscript', { conversationId: c.id, limit: 50 });
      return t.entries.some((e) => e.kind === 'reply');
    });

  before(async () => {
    buildConsole();
    [ok, failing, gone] = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
    failing.respond = () => ({ status: 500 });
    gone.respond = () => ({ status: 410 });
    const dir = mkdtempSync(join(tmpdir(), 'sb-review2-'));
    secrets['acme'] = secretFrom(cli(dir, 'clients', 'add', 'acme', '--send-url', ok.url).stdout);
    secrets['flaky'] = secretFrom(cli(dir, 'clients', 'add', 'flaky', '--send-url', `${failing.url}?token=abc123secret&team=7`).stdout);
    secrets['closed'] = secretFrom(cli(dir, 'clients', 'add', 'closed', '--send-url', gone.url).stdout);
    cli(dir, 'kb', 'add', '--question', 'Where is my parcel?', '--answer', 'Track it with the link in your confirmation email.');
    cli(dir, 'kb', 'add', '--question', 'Can I return my parcel?', '--answer', 'Yes, within 30 days.');
    cli(dir, 'kb', 'add', '--question', 'Do you ship abroad?', '--answer', 'We ship to 40 countries.');
    ({ server } = await startServe(dir));
    await consoleCall(server, 'setOperator', { id: 'ann', name: 'Ann Lee' });
    await send('acme', { event_type: 'auto_dialog', msg_id: 'r2-alice', from_user_id: 'alice', from_user_type: 2, content: 'Where is my parcel?', nickname: 'Alice Chen' });
    await send('acme', { event_type: 'auto_dialog', msg_id: 'r2-carol', from_user_id: 'carol', from_user_type: 2, content: 'Does the parcel come gift wrapped?', nickname: 'Carol Smith' });
    await send('acme', { event_type: 'auto_dialog', msg_id: 'r2-tom', from_user_id: 'tom', from_user_type: 2, content: 'Do you ship abroad?', nickname: 'Tom (staff)' });
    await send('flaky', { event_type: 'auto_dialog', msg_id: 'r2-bob', from_user_id: 'bob', from_user_type: 2, content: 'Where is my parcel?', nickname: 'Bob Retry' });
    await send('closed', { event_type: 'auto_dialog', msg_id: 'r2-dan', from_user_id: 'dan', from_user_type: 2, content: 'Where is my parcel?', nickname: 'Dan Gone' });
    await Promise.all([replied('alice'), replied('carol'), replied('tom')]);
    await waitFor('one delivery retrying after HTTP 500 and one dead after HTTP 410', async () => {
      const all = await consoleCall<DeliveryItem[]>(server, 'listDeliveries', {});
      return all.some((d) => d.state === 'retrying' && d.lastStatus === 500) && all.some((d) => d.state === 'dead');
    });
    browser = await launchChromium();
    page = await openConsole(browser, server, { width: 1280, height: 800 });
    await page.waitForSelector('[data-conversation]');
  });
  after(async () => {
    server?.child.kill('SIGCONT'); // never leave a stopped serve behind
    await browser?.close();
    await stopServe(server);
    await Promise.all([ok?.close(), failing?.close(), gone?.close()]);
  });

  it('a handoff does not present its nearest entries as sources; an answer shows only the entry it came from', async () => {
    await open('Carol Smith');
    const handoff = page.locator('[data-testid=transcript] li.entry.reply').last();
    await handoff.locator('[data-testid=sources]').waitFor();
    assert.match((await handoff.locator('[data-testid=sources]').textContent()) ?? '', /^kb · closest entries \(below the threshold, not used\):/);
    assert.doesNotMatch((await handoff.textContent()) ?? '', /from the knowledge base/);

    await open('Alice Chen');
    const answer = page.locator('[data-testid=transcript] li.entry.reply').last();
    await answer.locator('[data-testid=sources]').waitFor();
    const t = await consoleCall<Transcript>(server, 'getTranscript', { conversationId: (await row(page, 'Alice Chen').getAttribute('data-conversation'))!, limit: 50 });
    const reply = t.entries.find((e) => e.kind === 'reply')!;
    assert.ok((reply.sources ?? []).length > 1, 'the engine ranked more than one entry');
    assert.equal(await answer.locator('[data-testid=sources] button').count(), 1, 'only the entry the answer came from');
    assert.match((await answer.locator('[data-testid=sources]').textContent()) ?? '', /^kb · answered from the knowledge base: “Where is my parcel\?”/);
  });

  it('avatar initials are letters: "Tom (staff)" is T', async () => {
    await page.click('nav [data-view="conversations"]');
    assert.equal(await row(page, 'Tom (staff)').locator('.avatar').textContent(), 'T');
  });

  it('a suggestion of the built-in engine says the instruction was not followed', async () => {
    await open('Tom (staff)');
    await page.getByPlaceholder(/Instruction \(optional\)/).fill('mention the 30-day returns');
    await page.getByRole('button', { name: 'Suggest a reply' }).click();
    const card = page.locator('[data-testid=suggestion]');
    await card.waitFor();
    await card.locator('[data-testid=instruction-ignored]').waitFor();
    assert.match((await card.textContent()) ?? '', /We ship to 40 countries\..*does not follow instructions/);
  });

  it('deliveries show the HTTP status in its own column, 500 and 410 apart, and the whole error, at 1280 and 1024 px', async () => {
    await page.click('nav [data-view="deliveries"]');
    const retrying = page.locator('[data-testid=deliveries] tbody tr.retrying');
    const dead = page.locator('[data-testid=deliveries] tbody tr.dead');
    await retrying.waitFor();
    await dead.waitFor();
    for (const width of [1280, 1024]) {
      await page.setViewportSize({ width, height: 800 });
      assert.equal(await retrying.locator('[data-testid=delivery-status]').textContent(), 'HTTP 500');
      assert.equal(await dead.locator('[data-testid=delivery-status]').textContent(), 'HTTP 410');
      const clipped = await js<boolean>(page, `[...document.querySelectorAll('[data-testid=delivery-status]')].some((c) => c.scrollWidth > c.clientWidth)`);
      assert.equal(clipped, false, `the status is whole at ${width} px`);
      // Why it failed is what decides a retry: the whole text shows, over more than one line if need be.
      const cut = await js<string[]>(page, `[...document.querySelectorAll('[data-testid=delivery-problem] > span')].filter((c) => c.scrollHeight > c.clientHeight + 1 || c.scrollWidth > c.clientWidth + 1).map((c) => c.textContent)`);
      assert.deepEqual(cut, [], `every error is whole at ${width} px`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("a send_url's query values are masked in the cell and the tooltip; Copy gives the whole URL", async () => {
    const url = page.locator('[data-testid=deliveries] tbody tr.retrying [data-testid=delivery-url]');
    assert.equal(await url.getAttribute('title'), `${failing.url}?token=…&team=…`);
    assert.match((await url.textContent()) ?? '', /\/hook\?token=…&team=…$/);
    assert.doesNotMatch(await page.locator('[data-testid=deliveries]').innerHTML(), /abc123secret/);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.locator('[data-testid=deliveries] tbody tr.retrying [data-testid=copy-delivery-url]').click();
    assert.equal(await js<string>(page, 'navigator.clipboard.readText()'), `${failing.url}?token=abc123secret&team=7`);
  });

  it('the dashboard says "1 delivery waiting", in English and Chinese', async () => {
    const stats = await consoleCall<{ now: { pending: number } }>(server, 'stats', { minutes: 60 });
    assert.equal(stats.now.pending, 1, 'one delivery retrying');
    await page.click('nav [data-view="dashboard"]');
    const tile = page.locator('[data-testid=tile-pending]');
    await tile.waitFor();
    assert.equal((await tile.textContent())?.trim(), '1 delivery waiting');
    await chooseLanguage(page, 'zh-CN');
    assert.equal((await tile.textContent())?.trim(), '1 条待投递');
    await chooseLanguage(page, 'en');
  });

  it('a knowledge-base entry is deleted only after a confirmation dialog, and the console says it was', async () => {
    await page.click('nav [data-view="kb"]');
    const entry = page.locator('[data-testid=kb-table] tr:has-text("Can I return my parcel?")');
    await entry.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this knowledge-base entry?' });
    await dialog.waitFor();
    assert.match((await dialog.textContent()) ?? '', /Can I return my parcel\?/);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await entry.count(), 1, 'Cancel keeps it');
    await entry.getByRole('button', { name: 'Delete' }).click();
    await dialog.getByRole('button', { name: 'Delete entry' }).click();
    await entry.waitFor({ state: 'detached' });
    assert.equal(await page.locator('[data-testid=kb-status]').textContent(), 'Deleted “Can I return my parcel?”.');
    assert.equal((await consoleCall<Array<{ question: string }>>(server, 'listKb', {})).some((e) => e.question === 'Can I return my parcel?'), false);
  });

  it('a hung service (SIGSTOP) is noticed: Reconnecting then Offline, a click on a conversation loads then offers Retry, and SIGCONT brings it all back', async () => {
    // The server pings every 15 s; the test shortens the console's patience through the page, as the console allows.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    await context.addInitScript('window.switchboardTiming = { streamSilenceMs: 2000, loadTimeoutMs: 2000 }');
    const hung = await context.newPage();
    hung.setDefaultTimeout(20_000);
    await hung.goto(server.console);
    await hung.waitForSelector('[data-testid=connection][data-state=live]');
    await hung.locator('[data-testid=needs-you-count]').waitFor();
    const count = await hung.locator('[data-testid=needs-you-count]').textContent();
    try {
      server.child.kill('SIGSTOP');
      const stoppedAt = Date.now();
      await hung.waitForSelector('[data-testid=connection][data-state=reconnecting], [data-testid=connection][data-state=offline]', { timeout: 6_000 });
      await hung.waitForSelector('[data-testid=connection][data-state=offline]:has-text("Offline since")', { timeout: 10_000 });
      assert.ok(Date.now() - stoppedAt < 12_000);
      // "Offline since …" and "Reconnect now" take the room of "Live": the header stays one row at 1280 px.
      const rows = await js<number>(
        hung,
        `(() => { const kids = [...document.querySelector('header.top').children].filter((k) => !k.classList.contains('endpoint') && k.getBoundingClientRect().width > 1);
          const mids = kids.map((k) => { const r = k.getBoundingClientRect(); return (r.top + r.bottom) / 2; }); return Math.max(...mids) - Math.min(...mids) < 16 ? 1 : 2; })()`,
      );
      assert.equal(rows, 1, 'offline, the header is still one row');
      await row(hung, 'Alice Chen').click();
      await hung.locator('[data-testid=transcript-loading]:has-text("Loading the conversation…")').waitFor({ timeout: 2_000 });
      const failed = hung.locator('[data-testid=transcript-failed]');
      await failed.waitFor({ timeout: 6_000 });
      assert.match((await failed.getByRole('alert').textContent()) ?? '', /^Could not load this conversation: the service did not answer/);
      assert.equal(await hung.locator('[data-testid=needs-you-count]').textContent(), count, 'the Needs-you count stays');
      // Retry tries again, as it says: loading, then the same error while the service is still stopped.
      await failed.getByRole('button', { name: 'Retry' }).click();
      await hung.locator('[data-testid=transcript-loading]').waitFor({ timeout: 2_000 });
      await failed.waitFor({ timeout: 6_000 });
    } finally {
      server.child.kill('SIGCONT');
    }
    // Back: live again, and the resync after the reconnect opens the conversation that was asked for.
    await hung.waitForSelector('[data-testid=connection][data-state=live]', { timeout: 15_000 });
    await hung.waitForSelector('[data-testid=transcript] h2:has-text("Alice Chen")', { timeout: 10_000 });
    await context.close();
  });
});

describe('the first-run screen of the second review', { skip }, () => {
  let server: ServeProcess;
  let browser: Browser;
  before(async () => {
    buildConsole();
    ({ server } = await startServe());
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await stopServe(server);
  });

  it('fits the header on one row at 1280 px with "Get started" and "Set operator", and stops saying no client is set up once one is', async () => {
    const page = await openConsole(browser, server, { width: 1280, height: 800 });
    await page.waitForSelector('nav [data-view="start"]');
    await page.waitForSelector('header.top .operator.signin');
    const rows = await js<{ h1: number; wrapped: string[] }>(
      page,
      `(() => { const h1 = document.querySelector('header.top h1').getBoundingClientRect();
        const wrapped = [...document.querySelectorAll('header.top > *')].filter((el) => el.getClientRects().length && el.getBoundingClientRect().top >= h1.bottom).map((el) => el.outerHTML.slice(0, 60));
        return { h1: h1.bottom, wrapped }; })()`,
    );
    assert.deepEqual(rows.wrapped, [], 'nothing on a second row');
    await page.click('nav [data-view="start"]');
    assert.match((await page.locator('[data-testid=start-intro]').textContent()) ?? '', /No client is set up yet/);
    await page.getByRole('textbox', { name: 'New client ID' }).fill('shop');
    await page.getByRole('button', { name: 'Add client' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'I have stored it' }).click();
    assert.equal(await page.locator('[data-testid=start-intro]').textContent(), 'shop is set up. Two more steps to a first answered message:');
  });
});
