import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from '@playwright/test';
import type { ServeProcess } from './helpers/processes.ts';
import { seriousViolations } from './helpers/axe.ts';
import { buildConsole, chooseLanguage, CHROMIUM, consoleCall, launchChromium, openConsole, sendAs, startServe, stopServe, useTheme, waitFor } from './helpers/console-session.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

/** The Learn view in Chromium against a real serve: an admin approves and rejects what the team's answers proposed. */
describe('the Learn view in Chromium', { skip }, () => {
  let browser: Browser;
  let server: ServeProcess;
  let page: Page;
  let secret: string;

  const ask = async (visitor: string, content: string): Promise<{ conversation_id: string; reply: { content: string; handoff: boolean } }> => {
    const res = await sendAs(server, 'acme', secret, { event_type: 'website_dialog', msg_id: `m-${randomUUID()}`, from_user_id: visitor, content });
    assert.equal(res.status, 200);
    return (await res.json()) as { conversation_id: string; reply: { content: string; handoff: boolean } };
  };
  const answer = async (visitor: string, question: string, reply: string): Promise<void> => {
    const asked = await ask(visitor, question);
    assert.equal(asked.reply.handoff, true);
    await consoleCall(server, 'sendReply', { conversationId: asked.conversation_id, content: reply });
  };
  const axeClean = async (what: string): Promise<void> => assert.deepEqual(await seriousViolations(page), [], what);

  before(async () => {
    buildConsole();
    ({ server } = await startServe());
    await consoleCall(server, 'setOperator', { id: 'boss', name: 'Boss' });
    secret = (await consoleCall<{ secret: string }>(server, 'addClient', { id: 'acme', settings: { sendUrl: 'http://127.0.0.1:9/hook' } })).secret;
    await consoleCall(server, 'saveKb', { question: 'Where is my order?', answer: 'Open Orders in your account to see where your parcel is.' });
    await answer('v1', 'How do I close my account? Ref 88812345, thanks.', 'Open Settings, then Privacy, then Close account.');
    await answer('v2', 'Can I pay with a gift card?', 'Not yet, sorry.');
    await waitFor('two proposals', async () => (await consoleCall<{ pending: number }>(server, 'countProposals')).pending === 2);
    browser = await launchChromium();
    page = await openConsole(browser, server);
    await page.waitForSelector('[data-conversation]');
  });
  after(async () => {
    await browser?.close();
    await stopServe(server);
  });

  it('the nav shows how many proposals wait; the view lists them masked, with who and how; axe finds nothing serious in light and dark, English and Chinese', async () => {
    assert.equal(await page.getByTestId('learn-count').textContent(), '2');
    await page.click('nav [data-view="kb"]');
    await page.click('nav.subnav [data-view="learn"]');
    await page.getByTestId('proposal-group').nth(1).waitFor();
    const close = page.getByTestId('proposal-group').filter({ hasText: 'close my account' });
    assert.match((await close.textContent()) ?? '', /How do I close my account\? Ref \[number\], thanks\./);
    assert.match((await close.textContent()) ?? '', /From Boss \(answer to a handoff\)/);
    assert.match((await close.textContent()) ?? '', /Asked once · 1 this week/);
    for (const lang of ['en', 'zh-CN'] as const) {
      await chooseLanguage(page, lang);
      for (const theme of ['light', 'dark'] as const) {
        await useTheme(page, theme);
        await axeClean(`${lang} ${theme}`);
      }
    }
    await chooseLanguage(page, 'en');
    await useTheme(page, 'light');
  });

  it('edit then approve: the entry exists and the bot answers the question at once; the badge counts down', async () => {
    const card = page.getByTestId('proposal-group').filter({ hasText: 'close my account' });
    await card.getByLabel('Question').fill('How do I close my account?');
    await card.getByRole('button', { name: 'Approve as a new entry' }).click();
    await page.getByTestId('learn-status').filter({ hasText: 'Approved' }).waitFor();
    await page.getByTestId('learn-count').filter({ hasText: '1' }).waitFor();
    await waitFor('one group left in the list', async () => (await page.getByTestId('proposal-group').count()) === 1);
    const kb = await consoleCall<Array<{ question: string; answer: string }>>(server, 'listKb', {});
    assert.ok(kb.some((e) => e.question === 'How do I close my account?' && e.answer === 'Open Settings, then Privacy, then Close account.'));
    const again = await ask('v3', 'How do I close my account?');
    assert.deepEqual(again.reply, { ...again.reply, handoff: false, content: 'Open Settings, then Privacy, then Close account.' });
  });

  it('reject with a reason: gone from Waiting, shown with its reason under Rejected (axe clean there too)', async () => {
    const card = page.getByTestId('proposal-group').filter({ hasText: 'gift card' });
    const reject = card.getByRole('button', { name: 'Reject' });
    assert.equal(await reject.isDisabled(), true, 'no reject without a reason');
    await card.getByLabel('Why reject it').fill('Gift cards are coming; answer then');
    await reject.click();
    await page.getByTestId('learn-status').filter({ hasText: 'Rejected' }).waitFor();
    await page.getByText('Nothing to review').waitFor();
    assert.equal(await page.getByTestId('learn-count').count(), 0, 'no badge with nothing waiting');
    await page.getByRole('radio', { name: 'Rejected' }).check();
    await page.getByTestId('rejected-reason').filter({ hasText: 'Rejected by Boss: Gift cards are coming; answer then' }).waitFor();
    for (const theme of ['light', 'dark'] as const) {
      await useTheme(page, theme);
      await axeClean(`rejected, ${theme}`);
    }
  });
  it('"Teach the bot" on a bot answer, by keyboard: prefilled with the question and the answer, focus on the right answer, axe clean; Ctrl+Enter proposes a correction with its provenance', async () => {
    const msgId = `m-${randomUUID()}`;
    const res = await sendAs(server, 'acme', secret, { event_type: 'website_dialog', msg_id: msgId, from_user_id: 'v4', nickname: 'Teach Tester', content: 'Where is my order?' });
    const asked = (await res.json()) as { conversation_id: string; reply: { handoff: boolean } };
    assert.equal(asked.reply.handoff, false, 'the bot answered');
    await page.click('nav [data-view="conversations"]');
    await page.click(`[data-conversation="${asked.conversation_id}"]`);
    const teach = page.locator('.entry.reply.ai').getByRole('button', { name: 'Teach the bot' });
    await teach.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Teach the bot' });
    await dialog.waitFor();
    assert.equal(await dialog.getByLabel('The customer asked').inputValue(), 'Where is my order?');
    assert.equal(await dialog.getByTestId('teach-bot-answer').textContent(), 'Open Orders in your account to see where your parcel is.');
    assert.equal(await page.evaluate("document.activeElement?.getAttribute('data-testid')"), 'teach-answer', 'the cursor waits in the right answer');
    assert.equal(await dialog.getByRole('button', { name: 'Propose' }).isDisabled(), true, 'nothing to propose yet');
    for (const theme of ['light', 'dark'] as const) {
      await useTheme(page, theme);
      await axeClean(`teach dialog, ${theme}`);
    }
    await page.keyboard.type('Open Orders, then Track: the carrier link shows where the parcel is today.');
    await page.keyboard.press('Control+Enter');
    await dialog.waitFor({ state: 'detached' });
    await page.getByTestId('key-notice').filter({ hasText: 'Proposed in Learn' }).waitFor();
    assert.equal(await page.evaluate("document.activeElement?.getAttribute('data-testid')"), 'teach', 'focus back on the button that opened it');
    const { groups } = await consoleCall<{ groups: Array<{ proposals: Array<{ source: string; kind: string; question: string; answer: string; conversationId: string | null; messageIds: string[] }> }> }>(server, 'listProposals', {});
    const p = groups.flatMap((g) => g.proposals).find((x) => x.conversationId === asked.conversation_id)!;
    assert.deepEqual(
      [p.source, p.kind, p.question, p.answer, p.messageIds[0], p.messageIds.length],
      ['correction', 'entry', 'Where is my order?', 'Open Orders, then Track: the carrier link shows where the parcel is today.', msgId, 2],
    );
    await useTheme(page, 'light');
  });

  it('"Teach the bot the answer" on a handed-off question, in Chinese: Escape closes it, the answer proposes it', async () => {
    const msgId = `m-${randomUUID()}`;
    const res = await sendAs(server, 'acme', secret, { event_type: 'website_dialog', msg_id: msgId, from_user_id: 'v5', nickname: 'Handoff Tester', content: 'Do you deliver on Sundays?' });
    const asked = (await res.json()) as { conversation_id: string; reply: { handoff: boolean } };
    assert.equal(asked.reply.handoff, true);
    await page.click(`[data-conversation="${asked.conversation_id}"]`);
    await chooseLanguage(page, 'zh-CN');
    // On the bot's handoff line, which answers that message.
    const teach = page.locator('.entry.reply.ai').getByRole('button', { name: '教机器人回答' });
    await teach.click();
    const dialog = page.getByRole('dialog', { name: '教机器人回答' });
    await dialog.waitFor();
    assert.equal(await dialog.getByLabel('客户的提问').inputValue(), 'Do you deliver on Sundays?');
    assert.equal(await dialog.getByTestId('teach-bot-answer').count(), 0, 'no bot answer to show');
    await axeClean('teach the answer, Chinese');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await chooseLanguage(page, 'en');
    await page.locator('.entry.reply.ai').getByRole('button', { name: 'Teach the bot the answer' }).click();
    await page.getByTestId('teach-answer').fill('Not on Sundays: we deliver Monday to Saturday.');
    assert.equal(await page.getByTestId('teach-to-reply').isChecked(), true, 'a handoff still waits: the answer goes to the reply box too');
    await page.getByRole('dialog').getByRole('button', { name: 'Propose' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    assert.equal(await page.getByTestId('compose').locator('textarea').inputValue(), 'Not on Sundays: we deliver Monday to Saturday.', 'ready to send to the customer');
    await page.getByTestId('compose').locator('textarea').fill('');
    const { groups } = await consoleCall<{ groups: Array<{ proposals: Array<{ source: string; conversationId: string | null; messageIds: string[] }> }> }>(server, 'listProposals', {});
    const p = groups.flatMap((g) => g.proposals).find((x) => x.conversationId === asked.conversation_id)!;
    assert.deepEqual([p.source, p.messageIds[0], p.messageIds.length], ['handoff', msgId, 2]);
  });

  it('"Propose an entry" by hand in Learn: a new entry, then a new way to ask an existing one (its answer shown, not asked for)', async () => {
    await page.click('nav [data-view="kb"]');
    await page.click('nav.subnav [data-view="learn"]');
    await page.getByRole('radio', { name: 'Waiting' }).check();
    const form = page.getByTestId('learn-propose');
    const propose = form.getByRole('button', { name: 'Propose' });
    await form.getByLabel('Question').fill('Do you have a shop in Paris?');
    assert.equal(await propose.isDisabled(), true, 'a new entry needs its answer');
    await form.getByLabel('Answer').fill('Not yet: we sell online only.');
    await propose.click();
    await page.getByTestId('learn-status').filter({ hasText: 'Proposed' }).waitFor();
    await page.getByTestId('proposal-group').filter({ hasText: 'Do you have a shop in Paris?' }).filter({ hasText: 'proposed by hand' }).waitFor();
    await waitFor('the form cleared for the next one', async () => (await form.getByLabel('Question').inputValue()) === '');
    const kb = await consoleCall<Array<{ id: number; question: string }>>(server, 'listKb', {});
    const order = kb.find((e) => e.question === 'Where is my order?')!;
    await form.getByLabel('Question').fill('Where has my parcel got to?');
    await form.getByLabel('Add it as').selectOption(String(order.id));
    await form.getByTestId('propose-entry-answer').filter({ hasText: 'Open Orders in your account' }).waitFor();
    await propose.click();
    const card = page.getByTestId('proposal-group').filter({ hasText: 'Where has my parcel got to?' });
    await card.filter({ hasText: `Would be added to entry #${order.id}` }).waitFor();
    for (const theme of ['light', 'dark'] as const) {
      await useTheme(page, theme);
      await axeClean(`learn with the hand form used, ${theme}`);
    }
  });
});
