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
    assert.equal(await page.getByTestId('proposal-group').count(), 1);
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
});
