import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { buildConsole, CHROMIUM, consoleCall, launchChromium, listRow, openConsole, sendAs, SHOTS, startServe, stopServe, waitFor } from './helpers/console-session.ts';
import type { DeliveryItem } from '../src/shared/console-api.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

/**
 * An integrator who sends the service description's display names sees names, not ids, wherever a
 * support agent looks, and the ids stay one hover or one click away.
 */
describe('names in the console, as the integration sent them', { skip }, () => {
  let server: ServeProcess;
  let browser: Browser;
  let page: Page;
  let secret = '';
  const send = (info: Record<string, unknown>) => sendAs(server, 'acme', secret, info);
  const group = { event_type: 'auto_dialog', group_id: 'R:1069605174', from_user_type: 2 };

  before(async () => {
    buildConsole();
    const dir = mkdtempSync(join(tmpdir(), 'sb-names-'));
    // Its send_url refuses connections: the reply is retried, and listed in Deliveries.
    secret = secretFrom(cli(dir, 'clients', 'add', 'acme', '--send-url', 'http://127.0.0.1:9/hook', '--bound-account', 'acme-bot').stdout);
    cli(dir, 'kb', 'add', '--question', 'Where is my parcel?', '--answer', 'Track it with the link in your confirmation email.');
    ({ server } = await startServe(dir));
    await consoleCall(server, 'setOperator', { id: 'ann', name: 'Ann Lee' });
    await send({ ...group, msg_id: 'n-1', group_name: 'Printer support', from_user_id: 'wxid_8g2k', from_user_nickname: 'Nora', content: 'Is the printer on floor 3 broken?' });
    await send({ ...group, msg_id: 'n-2', group_name: 'Printer support', from_user_id: 'wxid_s4m', from_user_nickname: 'Sam', at_list: ['acme-bot'], message_type: 2, quote: { msg_id: 'n-1', message_type: 1 }, content: 'same here, can you check?' });
    // Ben's own line carries no name; the bot answers it (its delivery is retried), then staff write to him and name him.
    await send({ event_type: 'auto_dialog', msg_id: 'n-5', from_user_id: 'cust-ben', from_user_type: 2, content: 'Where is my parcel?' });
    // Ben's own reply, made and failing (the group's fallback answer is a delivery too): only then may staff write.
    await waitFor("Ben's retrying delivery", async () => (await consoleCall<DeliveryItem[]>(server, 'listDeliveries', {})).some((d) => d.to?.id === 'cust-ben'));
    await send({ event_type: 'auto_dialog', msg_id: 'n-4', from_user_id: 'acme-bot', from_user_type: 1, to_user_id: 'cust-ben', to_user_nickname: 'Ben Okafor', content: 'Hi Ben, it is on its way.' });
    // Chatter after Sam's question, not addressed to the bot: not what needs a human.
    await send({ ...group, msg_id: 'n-6', from_user_id: 'wxid_8g2k', from_user_nickname: 'Nora', content: 'mine works again' });
    await send({ event_type: 'website_dialog', msg_id: 'n-3', from_user_id: 'v-wang', from_user_nickname: '王小明', content: '你们周日营业吗？' });
    // Sam's question is not in the knowledge base: handed off after its quiet period. Ben's is answered, and its delivery retried.
    await waitFor('the group in Needs you', async () => (await consoleCall<{ items: Array<{ groupId: string | null }> }>(server, 'listConversations', { view: 'needs_you' })).items.some((c) => c.groupId === 'R:1069605174'));
    browser = await launchChromium();
    page = await openConsole(browser, server, { width: 1280, height: 800 });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(server.console).origin });
    await page.waitForSelector('[data-conversation]');
  });
  after(async () => {
    await browser?.close();
    await stopServe(server);
  });

  it('the list titles the group by its name and the visitor by theirs, each with its id beside it', async () => {
    const row = listRow(page, 'Printer support');
    assert.match((await row.locator('.peer').textContent())!, /^Printer support R:1069605174 · acme/);
    assert.equal(await row.locator('.last').textContent(), 'Nora: mine works again', 'a group member is named in the preview');
    assert.match((await row.locator('.peer').getAttribute('title'))!, /^Printer support \(R:1069605174\)/);
    assert.match((await listRow(page, '王小明').locator('.peer').textContent())!, /^王小明 v-wang/);
    await page.fill('input[type=search]', 'printer sup');
    // The filtered page replaces the list when it arrives: wait for it, then it must hold the group alone.
    await waitFor('the filtered list', async () => (await page.locator('[data-conversation]').count()) === 1);
    assert.match((await page.locator('[data-conversation] .peer').textContent())!, /^Printer support/, 'found by its name');
    await page.fill('input[type=search]', '');
  });

  it('the transcript names each member, shows whom a line mentions and what it quotes, and copies the group id', async () => {
    await listRow(page, 'Printer support').click();
    await page.waitForSelector('[data-testid=transcript] h2:text-is("Printer support")');
    assert.equal(await page.locator('[data-entry="n-1"] .who').textContent(), 'Nora');
    assert.equal(await page.locator('[data-entry="n-1"] .id').textContent(), 'wxid_8g2k');
    assert.equal(await page.locator('[data-entry="n-2"] [data-testid=mentions]').textContent(), '@acme-bot');
    const quote = page.locator('[data-entry="n-2"] [data-testid=quote]');
    assert.equal(await quote.locator('cite').textContent(), 'Nora');
    assert.match((await quote.textContent())!, /Is the printer on floor 3 broken\?$/);
    await page.getByRole('button', { name: 'Copy the ID R:1069605174' }).click();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), 'R:1069605174');
    await page.screenshot({ path: join(SHOTS, 'names-group.png') });
  });

  it('a stored message of any shape never blanks the console: a quote whose content is an object shows as a quote, the rest keeps working', async () => {
    const r = await send({ ...group, msg_id: 'n-odd', from_user_id: 'wxid_s4m', from_user_nickname: 'Sam', message_type: 2, quote: { msg_id: 'n-1', message_type: 1, content: { text: 'not a string' } }, content: 'an odd quote' });
    assert.equal(r.status, 200);
    await listRow(page, 'Printer support').click();
    const entry = page.locator('[data-entry="n-odd"]');
    await entry.waitFor();
    // Only strings from stored JSON are rendered: the object is passed over for the stored message's text.
    assert.match((await entry.locator('[data-testid=quote]').textContent())!, /Is the printer on floor 3 broken\?$/);
    assert.equal(await page.locator('[data-testid=broken-entry], [data-testid=view-failed]').count(), 0);
    assert.equal(await page.locator('[data-entry="n-1"] .who').textContent(), 'Nora', 'the rest of the transcript is there');
  });

  it('Needs you, Deliveries and the request log name the conversation too', async () => {
    await page.click('nav [data-view="needs_you"]');
    const queued = page.locator('[data-testid=needs-you] li:has(.peer:has-text("Printer support")) [data-testid=queue-last]');
    assert.equal(await queued.textContent(), 'Sam: same here, can you check?', 'the question that needs a human, and who asked it');
    await page.click('nav [data-view="deliveries"]');
    // Staff wrote to Ben after his reply failed: its next try, when due, is cancelled (a human took over). Either way it is listed.
    await page.getByRole('button', { name: 'Cancelled', exact: true }).click();
    await page.waitForSelector('.deliveries button.link:text-is("Ben Okafor")');
    await page.click('nav [data-view="requests"]');
    await page.waitForSelector('[data-testid=request-log] button:text-is("王小明")');
  });
});
