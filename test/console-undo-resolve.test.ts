import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { buildConsole, chooseLanguage, CHROMIUM, closeConsole, consoleCall, consoleOnList, listRow, sendAs, startServe, waitFor } from './helpers/console-session.ts';
import { js } from './helpers/console-page.ts';
import { seriousViolations } from './helpers/integrate-panel.ts';
import type { ConversationPage } from '../src/shared/console-api.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

/** A stray Resolve in Chromium: Undo brings the customer back to their place in Needs you. */
describe('Undo of a Resolve in the console', { skip }, () => {
  let server: ServeProcess;
  let browser: Browser;
  let page: Page;
  let secret = '';
  const handoff = (visitor: string, nickname: string) =>
    sendAs(server, 'acme', secret, { event_type: 'website_dialog', msg_id: `ur-${visitor}-${Date.now()}`, from_user_id: visitor, content: 'I need a person, please', nickname });
  const needsYou = async () => (await consoleCall<ConversationPage>(server, 'listConversations', { view: 'needs_you' })).items.map((c) => c.id);
  const queueOnScreen = async (): Promise<string[]> => {
    await page.click('nav [data-view="needs_you"]');
    return page.locator('[data-testid=needs-you] [data-conversation]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-conversation')!));
  };
  const toast = () => page.locator('[data-testid=undo-toast]');
  const idOf = async (who: string) => (await consoleCall<ConversationPage>(server, 'listConversations', { search: who })).items[0]!.id;
  /** Opens a conversation from Needs you, as an agent works the queue, and waits for its Resolve button. */
  const openFromQueue = async (id: string) => {
    await page.click('nav [data-view="needs_you"]');
    await page.click(`[data-testid=needs-you] [data-conversation="${id}"]`);
    await page.locator('[data-testid=transcript] .conv-head').getByRole('button', { name: 'Resolve' }).waitFor();
  };

  before(async () => {
    buildConsole();
    const dir = mkdtempSync(join(tmpdir(), 'sb-undo-resolve-'));
    // No knowledge base: each website message is handed to a human at once.
    secret = secretFrom(cli(dir, 'clients', 'add', 'acme', '--send-url', 'http://127.0.0.1:9/hook').stdout);
    ({ server } = await startServe(dir));
    await consoleCall(server, 'setOperator', { id: 'ann', name: 'Ann Lee' });
    for (const [visitor, nickname] of [['ur-alice', 'Alice Wu'], ['ur-bob', 'Bob Lin'], ['ur-cara', 'Cara Diaz']] as const) {
      assert.equal((await handoff(visitor, nickname)).status, 200);
    }
    await waitFor('three in Needs you', async () => (await needsYou()).length === 3);
    ({ browser, page } = await consoleOnList(server));
  });
  after(async () => {
    await closeConsole(browser, server);
  });

  it('Resolve, then Undo (keyboard): back in Needs you at its original place, with a line naming who undid it', async () => {
    const queue = await needsYou();
    const bob = await idOf('Bob Lin');
    assert.equal(queue[1], bob, 'Bob waits between Alice and Cara');
    assert.deepEqual(await queueOnScreen(), queue);
    await openFromQueue(bob);
    await page.locator('[data-testid=transcript] .conv-head').getByRole('button', { name: 'Resolve' }).click();
    await toast().waitFor();
    assert.match((await toast().textContent()) ?? '', /Resolved Bob Lin: out of Needs you/);
    assert.deepEqual(await needsYou(), [queue[0], queue[2]], 'Resolve took Bob out of the queue');
    // The Resolve button went with the flag; the focus is on Undo, not lost at the top of the page.
    assert.equal(await js(page, `document.activeElement?.textContent === 'Undo' && document.querySelector('[data-testid=undo-toast]').contains(document.activeElement)`), true);
    await page.keyboard.press('Enter');
    await toast().waitFor({ state: 'detached' });
    await page.waitForSelector('[data-testid=transcript] .entry.command >> text=Resolve undone by Ann Lee: back in Needs you');
    assert.equal(await js(page, `document.activeElement?.classList.contains('transcript-scroll')`), true, 'the focus goes to the conversation, not the page start');
    await page.locator('[data-testid=transcript] .conv-head .badge.warn').waitFor();
    assert.deepEqual(await needsYou(), queue, 'its original place, not the end');
    await waitFor('the queue on screen', async () => JSON.stringify(await queueOnScreen()) === JSON.stringify(queue));
    // The queue shows what Bob asked for, not the console's own Undo line.
    await page.click('nav [data-view="conversations"]');
    await listRow(page, 'Bob Lin').locator('.last').filter({ hasText: 'Resolve undone by Ann Lee' }).waitFor();
    await page.click('nav [data-view="needs_you"]');
    assert.equal(await page.locator(`[data-testid=needs-you] [data-conversation="${bob}"] .last`).textContent(), 'I need a person, please');
    assert.deepEqual(await seriousViolations(page), []);
  });

  it('a double click on Resolve resolves once, so its Undo still applies', async () => {
    const alice = await idOf('Alice Wu');
    const queue = await needsYou();
    await openFromQueue(alice);
    await page.locator('[data-testid=transcript] .conv-head').getByRole('button', { name: 'Resolve' }).dblclick();
    await toast().waitFor();
    await toast().getByRole('button', { name: 'Undo' }).click();
    await page.waitForSelector('[data-testid=transcript] .entry.command >> text=Resolve undone by Ann Lee');
    assert.deepEqual(await needsYou(), queue);
    assert.equal(await page.locator('[data-testid=undo-refused]').count(), 0);
  });

  it('Undo of a conversation that changed meanwhile is refused, says why, and leaves it as it is', async () => {
    const cara = await idOf('Cara Diaz');
    await openFromQueue(cara);
    await page.locator('[data-testid=transcript] .conv-head').getByRole('button', { name: 'Resolve' }).click();
    await toast().waitFor();
    // Cara writes again before the agent presses Undo: the new message puts her back in Needs you by itself.
    assert.equal((await handoff('ur-cara', 'Cara Diaz')).status, 200);
    const since = async () => (await consoleCall<Array<{ needsHumanSince: number | null }>>(server, 'getConversations', { ids: [cara] }))[0]!.needsHumanSince;
    const flagged = await waitFor('Cara flagged again', since);
    await toast().getByRole('button', { name: 'Undo' }).click();
    const refused = page.locator('[data-testid=undo-refused]');
    await refused.waitFor();
    assert.equal(await refused.textContent(), 'Not undone: Cara Diaz is back in Needs you already, flagged again by something new.×');
    assert.equal(await since(), flagged, 'her new wait stands');
    assert.equal(await page.locator('[data-testid=transcript] .entry.command >> text=Resolve undone').count(), 0);
    await listRow(page, 'Cara Diaz').waitFor();
    assert.deepEqual(await seriousViolations(page), []);
    await chooseLanguage(page, 'zh-CN');
    assert.match((await refused.textContent()) ?? '', /^未撤销：Cara Diaz 已因新的情况重新回到待处理。/);
    assert.deepEqual(await seriousViolations(page), []);
    await chooseLanguage(page, 'en');
    await refused.getByRole('button', { name: 'Close' }).click();
    await refused.waitFor({ state: 'detached' });
  });

  it('"Send to Needs you…" (h) puts a conversation resolved by e at the end of Needs you, with the note in its line and in the list', async () => {
    const alice = await idOf('Alice Wu');
    await openFromQueue(alice);
    const head = page.locator('[data-testid=transcript] .conv-head');
    await head.getByRole('button', { name: 'Resolve' }).waitFor();
    await page.keyboard.press('e');
    await toast().waitFor();
    const queue = await needsYou();
    assert.ok(!queue.includes(alice));
    // One name for the queue: the button says what it does with it, and no badge says "Needs human".
    const send = head.getByRole('button', { name: 'Send to Needs you…', exact: true });
    await send.waitFor();
    assert.equal(await send.getAttribute('aria-keyshortcuts'), 'h');
    // e again has nothing to resolve, and says so.
    await page.keyboard.press('e');
    assert.equal(await page.locator('[data-testid=key-notice]').textContent(), 'Nothing to resolve: this conversation is not in Needs you.');
    await page.keyboard.press('h');
    const dialog = page.locator('[data-testid=flag-dialog]');
    await page.getByRole('dialog', { name: 'Send to Needs you' }).waitFor();
    assert.equal(await dialog.getByRole('button', { name: 'Send to Needs you', exact: true }).count(), 1, 'the submit button names the action');
    await dialog.getByLabel('Note (optional)').fill('refund over 500, for Chen');
    assert.deepEqual(await seriousViolations(page), []);
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    await page.waitForSelector('[data-testid=transcript] .entry.command >> text=Sent to Needs you by Ann Lee: refund over 500, for Chen');
    await head.getByRole('button', { name: 'Resolve' }).waitFor();
    assert.equal(await head.locator('.badge.warn').textContent(), 'Needs you');
    assert.deepEqual(await needsYou(), [...queue, alice], 'at the end of the queue');
    // h again says it is already there, rather than nothing at all.
    await page.keyboard.press('h');
    assert.equal(await page.locator('[data-testid=key-notice]').textContent(), 'Already in Needs you.');
    await waitFor('the queue on screen', async () => JSON.stringify(await queueOnScreen()) === JSON.stringify([...queue, alice]));
    await page.locator(`[data-testid=needs-you] [data-conversation="${alice}"] .last`).filter({ hasText: 'refund over 500, for Chen (flagged by Ann Lee)' }).waitFor();
    assert.deepEqual(await seriousViolations(page), []);
    await chooseLanguage(page, 'zh-CN');
    await page.locator(`[data-testid=needs-you] [data-conversation="${alice}"] .last`).filter({ hasText: 'refund over 500, for Chen（Ann Lee 标记）' }).waitFor();
    await chooseLanguage(page, 'en');
  });
});
