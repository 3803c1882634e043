import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { buildConsole, chooseLanguage, CHROMIUM, closeConsole, consoleCall, consoleOnList, openConversation, sendAs, startServe, useTheme, waitFor } from './helpers/console-session.ts';
import { js, shoot } from './helpers/console-page.ts';
import { seriousViolations } from './helpers/integrate-panel.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import type { DeliveryItem } from '../src/shared/console-api.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

/**
 * How the console shows a reply's delivery: in Deliveries (the HTTP status, the target, the
 * error, Retry, Retry all dead, Cancel and how each went), on the dashboard, and in the transcript
 * (why a reply waits, Retry now, Cancel). In Chromium against a real serve, at 1280×800 unless
 * said otherwise: flaky's receiver answers 500 (its replies retry), closed's answers 410 (dead).
 */
describe('delivery states in the console: status, target, Retry, Cancel and their outcomes', { skip }, () => {
  let server: ServeProcess;
  let browser: Browser;
  let page: Page;
  let failing: Receiver;
  let gone: Receiver;
  const secrets: Record<string, string> = {};
  const send = (client: string, info: Record<string, unknown>) => sendAs(server, client, secrets[client]!, info);
  const open = (who: string): Promise<void> => openConversation(page, who);

  before(async () => {
    buildConsole();
    [failing, gone] = await Promise.all([startReceiver(), startReceiver()]);
    failing.respond = () => ({ status: 500 });
    gone.respond = () => ({ status: 410 });
    const dir = mkdtempSync(join(tmpdir(), 'sb-delivery-states-'));
    secrets['flaky'] = secretFrom(cli(dir, 'clients', 'add', 'flaky', '--send-url', `${failing.url}?token=abc123secret&team=7`).stdout);
    secrets['closed'] = secretFrom(cli(dir, 'clients', 'add', 'closed', '--send-url', gone.url).stdout);
    cli(dir, 'kb', 'add', '--question', 'Where is my parcel?', '--answer', 'Track it with the link in your confirmation email.');
    ({ server } = await startServe(dir));
    await consoleCall(server, 'setOperator', { id: 'ann', name: 'Ann Lee' });
    await send('flaky', { event_type: 'auto_dialog', msg_id: 'r2-bob', from_user_id: 'bob', from_user_type: 2, content: 'Where is my parcel?', nickname: 'Bob Retry' });
    await send('closed', { event_type: 'auto_dialog', msg_id: 'r2-dan', from_user_id: 'dan', from_user_type: 2, content: 'Where is my parcel?', nickname: 'Dan Gone' });
    await waitFor('one delivery retrying after HTTP 500 and one dead after HTTP 410', async () => {
      const all = await consoleCall<DeliveryItem[]>(server, 'listDeliveries', {});
      return all.some((d) => d.state === 'retrying' && d.lastStatus === 500) && all.some((d) => d.state === 'dead');
    });
    ({ browser, page } = await consoleOnList(server));
  });
  after(async () => {
    await closeConsole(browser, server);
    await Promise.all([failing?.close(), gone?.close()]);
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

  it("a dead delivery's Retry is one word on one line, at 1280 and 1024 px", async () => {
    await page.click('nav [data-view="deliveries"]');
    const dead = page.locator('[data-testid=deliveries] tbody tr.dead').first();
    await dead.waitFor();
    for (const width of [1280, 1024]) {
      await page.setViewportSize({ width, height: 768 });
      const retry = await dead.getByRole('button', { name: 'Retry' }).boundingBox();
      const copy = await dead.locator('[data-testid=copy-delivery-url]').boundingBox();
      assert.ok(retry && copy);
      assert.ok(retry.height <= copy.height + 1, `Retry is ${retry.height} px high at ${width} px, a one-line button is ${copy.height}: it broke over two lines`);
    }
    assert.deepEqual(await seriousViolations(page), []);
    await page.setViewportSize({ width: 1280, height: 800 });
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

  // Several tries of one reply, and several replies: a failing reply held the agent's next one back;
  // Retry now, Cancel and Retry all dead each say how it went.
  const conversationOf = async (customer: string): Promise<string> => {
    const list = await consoleCall<{ items: Array<{ id: string; customerId: string | null }> }>(server, 'listConversations', { limit: 50 });
    return list.items.find((x) => x.customerId === customer)!.id;
  };
  const deliveryOf = async (customer: string, state: DeliveryItem['state']): Promise<DeliveryItem> => {
    const conversationId = await conversationOf(customer);
    return waitFor(`${customer}'s ${state} delivery`, async () => (await consoleCall<DeliveryItem[]>(server, 'listDeliveries', { states: [state] })).find((d) => d.conversationId === conversationId));
  };

  it('the transcript says why a reply waits and when the failing one is tried next; Retry now tells how it went; Cancel lets the next reply go', async () => {
    failing.respond = (r) => ({ status: r.body.message_info['content'] === 'Second answer' ? 200 : 500 });
    const bob = await conversationOf('bob');
    const first = await consoleCall<{ deliveryId: number }>(server, 'sendReply', { conversationId: bob, content: 'First answer' });
    await waitFor('the first answer to fail once', async () => (await consoleCall<DeliveryItem[]>(server, 'listDeliveries', {})).some((d) => d.id === first.deliveryId && d.attempts >= 1));
    const second = await consoleCall<{ msgId: string; deliveryId: number }>(server, 'sendReply', { conversationId: bob, content: 'Second answer' });
    await open('Bob Retry');
    const firstLine = page.locator('[data-testid=transcript] li.entry.operator:has-text("First answer") [data-testid=delivery]');
    const secondLine = page.locator('[data-testid=transcript] li.entry.operator:has-text("Second answer") [data-testid=delivery]');
    await firstLine.and(page.locator('[data-state=retrying]')).waitFor();
    assert.match((await firstLine.textContent()) ?? '', /^Delivery: retrying after \d+ failed attempts? · the receiver answered HTTP 500 · next try .*\d{2}:\d{2}/);
    await secondLine.and(page.locator('[data-held=failing]')).waitFor();
    assert.match((await secondLine.textContent()) ?? '', /^Delivery: waiting behind an earlier reply that is failing \(next try .*\d{2}:\d{2}.*\)$/);
    await shoot(page, 'delivery-held-reply');
    for (const theme of ['dark', 'light'] as const) {
      await useTheme(page, theme);
      assert.deepEqual(await seriousViolations(page), [], theme);
    }

    // Retry now: tried at once (the next try was minutes away), and the line says it failed again.
    const tries = failing.received.filter((r) => r.body.message_info['content'] === 'First answer').length;
    await firstLine.getByRole('button', { name: 'Retry now' }).click();
    await firstLine.and(page.locator('[data-retry=failed]')).waitFor();
    assert.equal(failing.received.filter((r) => r.body.message_info['content'] === 'First answer').length, tries + 1);
    assert.match((await firstLine.locator('[data-testid=retry-result]').textContent()) ?? '', /Retried: failed again \(HTTP 500\)$/);
    assert.match((await firstLine.textContent()) ?? '', /next try/, 'still retrying, with its next try');

    // Cancel: it says who cancelled it, and the reply held behind it is delivered.
    await firstLine.getByRole('button', { name: 'Cancel delivery' }).click();
    // Nothing brings a cancelled reply back: the console asks first, with "Keep it" focused.
    const confirm = page.locator('[data-testid=cancel-delivery-dialog]');
    assert.equal(await js(page, 'document.activeElement?.textContent'), 'Keep it');
    assert.deepEqual(await seriousViolations(page), []);
    await confirm.getByRole('button', { name: 'Cancel delivery' }).click();
    await firstLine.and(page.locator('[data-state=cancelled]')).waitFor();
    assert.match((await firstLine.textContent()) ?? '', /cancelled by Ann Lee from the console/);
    await secondLine.and(page.locator('[data-state=sent]')).waitFor();
    assert.ok(failing.received.some((r) => r.body.message_info['msg_id'] === second.msgId));
    await chooseLanguage(page, 'zh-CN');
    assert.match((await firstLine.textContent()) ?? '', /由 Ann Lee 在控制台取消/);
    await chooseLanguage(page, 'en');
  });

  it('Deliveries: Retry now and Cancel a retrying row; Retry all dead says how each went; a retried row keeps its place and shows "Sending…" then its result', async () => {
    // Two more dead replies beside Dan's; Fay's receiver comes back, the others stay gone.
    for (const who of ['erin', 'fay']) {
      await send('closed', { event_type: 'auto_dialog', msg_id: `r3-${who}`, from_user_id: who, from_user_type: 2, content: 'Where is my parcel?', nickname: `${who} Gone` });
    }
    await deliveryOf('erin', 'dead');
    await deliveryOf('fay', 'dead');
    await send('flaky', { event_type: 'auto_dialog', msg_id: 'r3-gus', from_user_id: 'gus', from_user_type: 2, content: 'Where is my parcel?', nickname: 'Gus Flaky' });
    const gus = await deliveryOf('gus', 'retrying');
    gone.respond = (r) => ({ status: r.body.message_info['to_user_id'] === 'fay' ? 200 : 410 });

    await page.click('nav [data-view="deliveries"]');
    const status = page.locator('[data-testid=deliveries-said]');
    const gusRow = page.locator(`[data-testid=deliveries] tr[data-delivery="${gus.id}"]`);
    await gusRow.waitFor();
    const tries = failing.received.length;
    await gusRow.getByRole('button', { name: 'Retry now' }).click();
    await waitFor('the row to say it failed again', async () => (await status.textContent()) === 'Retried 1: 1 failed again (HTTP 500)');
    assert.equal(failing.received.length, tries + 1, 'tried at once');
    assert.equal(await gusRow.locator('[data-testid=retry-result]').textContent(), 'Failed again (HTTP 500)');
    assert.equal(await gusRow.locator('[data-testid=retry-result]').getAttribute('title'), 'Retried: failed again (HTTP 500)');
    await gusRow.getByRole('button', { name: 'Cancel delivery' }).click();
    await page.locator('[data-testid=cancel-delivery-dialog]').getByRole('button', { name: 'Cancel delivery' }).click();
    await gusRow.waitFor({ state: 'detached' });
    assert.equal(await status.textContent(), 'Cancelled: that reply will not be sent.');
    const cancelled = await deliveryOf('gus', 'cancelled');
    assert.equal(cancelled.lastError, 'cancelled by Ann Lee from the console');

    const retryAll = page.getByRole('button', { name: 'Retry all dead (3)' });
    await retryAll.waitFor();
    const ids = await page.locator('[data-testid=deliveries] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-delivery')));
    await retryAll.click();
    await waitFor('the outcome of all three', async () => (await status.textContent()) === 'Retried 3: 1 delivered, 2 failed again (HTTP 410)');
    const fay = await conversationOf('fay');
    const after = await page.locator('[data-testid=deliveries] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-delivery')));
    const delivered = (await consoleCall<Array<{ id: number; conversationId: string; state: string }>>(server, 'getDeliveries', { ids: ids.map(Number) })).find((d) => d.conversationId === fay)!;
    assert.equal(delivered.state, 'sent');
    assert.deepEqual(after, ids.filter((id) => id !== String(delivered.id)), 'the rows that failed again kept their places; the delivered one left');
    assert.equal(await page.locator('[data-testid=deliveries] tr.dead [data-testid=retry-result]').count(), 2);
    await chooseLanguage(page, 'zh-CN');
    assert.equal(await status.textContent(), '已重试 3 条：1 条已送达，2 条再次失败（HTTP 410）');
    await chooseLanguage(page, 'en');
    await shoot(page, 'deliveries-retry-outcome');
    for (const theme of ['dark', 'light'] as const) {
      await useTheme(page, theme);
      assert.deepEqual(await seriousViolations(page), [], theme);
    }

    // One row's Retry: "Sending…" while it is under way would be a flash; its result is what stays.
    const rows = () => page.locator('[data-testid=deliveries] tbody tr').evaluateAll((all) => all.map((r) => r.getAttribute('data-delivery')));
    const before = await rows();
    const dead = page.locator('[data-testid=deliveries] tbody tr.dead').last();
    await dead.getByRole('button', { name: 'Retry', exact: true }).click();
    await waitFor('its result', async () => (await status.textContent()) === 'Retried 1: 1 failed again (HTTP 410)');
    assert.deepEqual(await rows(), before, 'it did not move');
    assert.deepEqual(await seriousViolations(page), []);

    // Two Retries in a row, the first still under way: the status line sums up both, not the second alone.
    let release = (): void => {};
    const held = new Promise<void>((r) => (release = r));
    gone.respond = () => ({ status: 410, hold: held });
    const [first, second] = [page.locator('[data-testid=deliveries] tbody tr.dead').first(), page.locator('[data-testid=deliveries] tbody tr.dead').last()];
    const secondId = await second.getAttribute('data-delivery');
    await first.getByRole('button', { name: 'Retry', exact: true }).click();
    await waitFor('the first under way', async () => (await status.textContent())?.startsWith('1 delivery queued again') ?? false);
    await page.locator(`[data-testid=deliveries] tr[data-delivery="${secondId}"]`).getByRole('button', { name: 'Retry', exact: true }).click();
    // Released only once the console counts both: a click is dispatched before its request is made.
    await waitFor('both under way', async () => (await status.textContent())?.startsWith('2 deliveries queued again') ?? false);
    gone.respond = () => ({ status: 410 });
    release();
    await waitFor('both results', async () => (await status.textContent()) === 'Retried 2: 2 failed again (HTTP 410)');
  });

  it('Cancel while a try is on its way: the status line says it may still arrive, then how that try ended, delivered or failed', async () => {
    await page.click('nav [data-view="deliveries"]');
    const status = page.locator('[data-testid=deliveries-said]');
    // The earlier tries failed with HTTP 500; the one on the wire answers 200 or 503, and the line says that one's.
    for (const [who, answer, said] of [
      ['hal', 200, 'hal Waiting: Cancelled, but the try that was already on its way was accepted by the receiver: the reply was delivered, once. It will not be sent again.'],
      ['ivy', 503, 'ivy Waiting: Cancelled. The try that was already on its way was not accepted by the receiver (HTTP 503). It will not be sent again.'],
    ] as const) {
      failing.respond = () => ({ status: 500 });
      await send('flaky', { event_type: 'auto_dialog', msg_id: `r4-${who}`, from_user_id: who, from_user_type: 2, content: 'Where is my parcel?', nickname: `${who} Waiting` });
      const d = await deliveryOf(who, 'retrying');
      const row = page.locator(`[data-testid=deliveries] tr[data-delivery="${d.id}"]`);
      await row.waitFor();
      // A try the outbox started (here a colleague's Retry now: this console's own shows "Sending…"
      // and holds Cancel until it is recorded) reaches the receiver, which holds its answer.
      let release = (): void => {};
      const held = new Promise<void>((r) => (release = r));
      failing.respond = () => ({ status: answer, hold: held });
      const tries = failing.received.length;
      await consoleCall(server, 'retryDeliveries', { ids: [d.id] });
      await waitFor('the try at the receiver', async () => failing.received.length === tries + 1);
      await row.getByRole('button', { name: 'Cancel delivery' }).click();
      await page.locator('[data-testid=cancel-delivery-dialog]').getByRole('button', { name: 'Cancel delivery' }).click();
      await waitFor('the on-the-wire notice', async () => ((await status.textContent()) ?? '').includes('the receiver may still get it'));
      // Refresh to see how it went: the line about that try stays until it can say.
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.waitForTimeout(300);
      assert.match((await status.textContent()) ?? '', /the receiver may still get it/);
      release();
      await waitFor(`the outcome for ${who}`, async () => (await status.textContent()) === said);
      assert.equal((await consoleCall<DeliveryItem[]>(server, 'getDeliveries', { ids: [d.id] }))[0]!.state, answer === 200 ? 'sent' : 'cancelled');
    }
    await page.setViewportSize({ width: 1024, height: 768 });
    await shoot(page, 'deliveries-cancel-outcome-1024');
    await page.setViewportSize({ width: 1280, height: 800 });
    await chooseLanguage(page, 'zh-CN');
    assert.equal(await status.textContent(), 'ivy Waiting：已取消。已经发出的那次尝试未被接收方接受（HTTP 503）。它不会再次发送。');
    await chooseLanguage(page, 'en');
    assert.deepEqual(await seriousViolations(page), []);
    failing.respond = () => ({ status: 500 });
  });
});
