import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { buildConsole, CHROMIUM, closeConsole, consoleCall, consoleOnList, listRow, openConversation, sendAs, startServe, waitFor } from './helpers/console-session.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

/** Transcript labels a support agent can trust (when a message was written, suggestions asked for, groups, search), checked in Chromium. */
describe('transcript labels a support agent can trust', { skip }, () => {
  let server: ServeProcess;
  let browser: Browser;
  let page: Page;
  let secret = '';
  const send = (info: Record<string, unknown>) => sendAs(server, 'acme', secret, info);
  const open = (who: string): Promise<void> => openConversation(page, who);

  before(async () => {
    buildConsole();
    const dir = mkdtempSync(join(tmpdir(), 'sb-labels-'));
    secret = secretFrom(cli(dir, 'clients', 'add', 'acme', '--send-url', 'http://127.0.0.1:9/hook', '--bound-account', 'bot-acme').stdout);
    ({ server } = await startServe(dir));
    await consoleCall(server, 'setOperator', { id: 'ann', name: 'Ann Lee' });
    const now = Math.floor(Date.now() / 1000);
    await send({ event_type: 'auto_dialog', msg_id: 'lb-late', from_user_id: 'hana', from_user_type: 2, content: 'Are you open on Sunday?', nickname: 'Hana', create_timestamp: now - 20 * 60 });
    await send({ event_type: 'auto_dialog', msg_id: 'lb-carol', from_user_id: 'carol', from_user_type: 2, content: 'My order is late', nickname: 'Carol', create_timestamp: now });
    await send({ event_type: 'assist_dialog', msg_id: 'lb-carol-assist', from_user_id: 'carol', from_user_type: 2, content: 'My order is late, what now?', nickname: 'Carol', create_timestamp: now });
    // An integration asking for a suggestion often sends no nickname.
    await send({ event_type: 'assist_dialog', msg_id: 'lb-carol-bare', from_user_id: 'carol', from_user_type: 2, content: 'And the refund?', create_timestamp: now });
    await send({ event_type: 'auto_dialog', msg_id: 'lb-group', group_id: 'team-logistics', from_user_id: 'dan', from_user_type: 2, content: 'hello all', nickname: 'Dan', create_timestamp: now });
    // No knowledge base: Ivan's question is handed off once its quiet period ends.
    await send({ event_type: 'auto_dialog', msg_id: 'lb-ivan', from_user_id: 'ivan', from_user_type: 2, content: 'Can I change my delivery address?', nickname: 'Ivan', create_timestamp: now });
    await waitFor('Ivan to need a human', async () => (await consoleCall<{ items: Array<{ customerId: string | null }> }>(server, 'listConversations', { view: 'needs_you' })).items.some((c) => c.customerId === 'ivan'));
    ({ browser, page } = await consoleOnList(server));
  });
  after(async () => {
    await closeConsole(browser, server);
  });

  it('a message too old to answer shows when it was written, not only when it arrived', async () => {
    await open('Hana');
    const meta = page.locator('[data-entry="lb-late"] .meta');
    await meta.locator('.written time').waitFor();
    const times = await meta.locator('time').evaluateAll((els) => els.map((e) => Date.parse(e.getAttribute('datetime')!)));
    assert.equal(times.length, 2);
    assert.ok(times[0]! - times[1]! >= 19 * 60_000, `arrived ${times[0]}, written ${times[1]}`);
    assert.match((await page.locator('[data-entry="lb-late"] [data-testid=why]').textContent())!, /too old/i);
    assert.equal(await page.locator('[data-entry="lb-carol"] .written').count(), 0, 'a message on time carries one time');
  });

  it('a message appended by assist_dialog says the integration asked for a suggestion', async () => {
    await open('Carol');
    await page.waitForSelector('[data-entry="lb-carol-assist"]');
    assert.match((await page.locator('[data-entry="lb-carol-assist"] .meta').textContent())!, /asked for a suggestion \(assist_dialog\)/);
    assert.doesNotMatch((await page.locator('[data-entry="lb-carol"] .meta').textContent())!, /assist_dialog/);
    // The line without a nickname is still Carol, under the name and avatar the conversation knows her by.
    await page.waitForSelector('[data-entry="lb-carol-bare"]');
    assert.equal(await page.locator('[data-entry="lb-carol-bare"] .who').textContent(), 'Carol');
    assert.equal(await page.locator('[data-entry="lb-carol-bare"] .avatar').textContent(), await page.locator('[data-entry="lb-carol"] .avatar').textContent());
  });

  it('the list previews the last reply with who gave it: the bot, or the operator by name', async () => {
    const list = await consoleCall<{ items: Array<{ id: string; customerId: string | null }> }>(server, 'listConversations', {});
    const carol = list.items.find((c) => c.customerId === 'carol')!;
    await consoleCall(server, 'sendReply', { conversationId: carol.id, content: 'A new one ships today.' });
    const row = page.locator(`[data-testid=conversation-list] [data-conversation="${carol.id}"]`);
    await row.locator('text=Ann Lee: A new one ships today.').waitFor();
  });

  it('Resolve leaves a line naming who resolved it, and the list previews it', async () => {
    await open('Ivan');
    await page.locator('[data-testid=transcript] .conv-head').getByRole('button', { name: 'Resolve' }).click();
    await page.waitForSelector('[data-testid=transcript] .entry.command >> text=Resolved by Ann Lee: out of Needs you');
    await listRow(page, 'Ivan').locator('text=Resolved by Ann Lee').waitFor();
  });

  it('a search lists each conversation with its matching message, not its last line', async () => {
    await page.click('nav [data-view="conversations"]');
    await page.fill('input[type=search]', 'delivery address');
    const ivan = listRow(page, 'Ivan');
    await ivan.locator('.last:text-is("Can I change my delivery address?")').waitFor();
    await page.fill('input[type=search]', '');
    await ivan.locator('.last >> text=Resolved by Ann Lee').waitFor();
  });

  it('a group conversation is not subtitled with the member who wrote last', async () => {
    await open('# team-logistics');
    const sub = (await page.locator('[data-testid=transcript] .conv-head small').textContent())!;
    // The group's own id (to copy), never the member who wrote last.
    assert.match(sub, /^team-logistics Copy · group chat · acme · IM$/);
  });
});
