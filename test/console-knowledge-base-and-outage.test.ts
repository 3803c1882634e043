import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { buildConsole, CHROMIUM, closeConsole, consoleCall, consoleOnList, listRow, openConversation, sendAs, startServe, waitFor } from './helpers/console-session.ts';
import { js } from './helpers/console-page.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import { seriousViolations } from './helpers/axe.ts';
import type { ConsoleOutputs } from '../src/shared/console-api.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

type Transcript = ConsoleOutputs['getTranscript'];

/**
 * The knowledge base as an agent meets it in the console (the sources a reply shows, what the
 * built-in engine's suggestion can do, deleting an entry), avatar initials of a customer named
 * with punctuation, and what the console does when the service stops answering. In Chromium against a real serve, at 1280×800.
 */
describe('knowledge-base answers in the console (sources, suggestions, deleting an entry), avatars, and a hung service', { skip }, () => {
  let server: ServeProcess;
  let browser: Browser;
  let page: Page;
  let ok: Receiver;
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
    ok = await startReceiver();
    const dir = mkdtempSync(join(tmpdir(), 'sb-kb-answers-'));
    secrets['acme'] = secretFrom(cli(dir, 'clients', 'add', 'acme', '--send-url', ok.url).stdout);
    cli(dir, 'kb', 'add', '--question', 'Where is my parcel?', '--answer', 'Track it with the link in your confirmation email.');
    cli(dir, 'kb', 'add', '--question', 'Can I return my parcel?', '--answer', 'Yes, within 30 days.');
    cli(dir, 'kb', 'add', '--question', 'Do you ship abroad?', '--answer', 'We ship to 40 countries.');
    ({ server } = await startServe(dir));
    await consoleCall(server, 'setOperator', { id: 'ann', name: 'Ann Lee' });
    await send('acme', { event_type: 'auto_dialog', msg_id: 'r2-alice', from_user_id: 'alice', from_user_type: 2, content: 'Where is my parcel?', nickname: 'Alice Chen' });
    await send('acme', { event_type: 'auto_dialog', msg_id: 'r2-carol', from_user_id: 'carol', from_user_type: 2, content: 'Does the parcel come gift wrapped?', nickname: 'Carol Smith' });
    await send('acme', { event_type: 'auto_dialog', msg_id: 'r2-tom', from_user_id: 'tom', from_user_type: 2, content: 'Do you ship abroad?', nickname: 'Tom (staff)' });
    await Promise.all([replied('alice'), replied('carol'), replied('tom')]);
    ({ browser, page } = await consoleOnList(server));
  });
  after(async () => {
    server?.child.kill('SIGCONT'); // never leave a stopped serve behind
    await closeConsole(browser, server);
    await ok?.close();
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

  it('trying a question: its answer shows while the question is in the box, and goes when it is emptied', async () => {
    await page.click('nav [data-view="kb"]');
    const box = page.getByRole('textbox', { name: 'Try a question…' });
    await box.fill('where is my parcel');
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.getByTestId('kb-answer').getByText('Track it with the link in your confirmation email.').waitFor();
    await box.fill('');
    await page.getByTestId('kb-answer').waitFor({ state: 'detached' });
  });

  it('the knowledge-base view plots the threshold: the week\'s questions answered, and a labelled file\'s right and uncovered lines, without serious axe findings', async () => {
    await page.click('nav [data-view="kb"]');
    const curve = page.locator('.threshold-curve');
    // Three customer questions this week: the two the knowledge base covers are answered at 0.55.
    await curve.getByText('At 0.55, the threshold in force, 67 % of the 3 customer questions of the last 7 days would be answered.').waitFor();
    await curve.getByRole('img', { name: /Share answered at each threshold/ }).waitFor();
    assert.equal(await curve.locator('polyline').count(), 1);
    const labelled = ['{"question":"where is my package","expected":"Where is my parcel?"}', '{"question":"do you deliver to other countries","expected":"Do you ship abroad?"}', '{"question":"do you sell gift cards","expected":null}'].join('\n');
    await curve.locator('input[type=file]').setInputFiles({ name: 'mine.jsonl', mimeType: 'application/json', buffer: Buffer.from(labelled) });
    await curve.getByText('mine.jsonl: 3 questions').waitFor();
    assert.equal(await curve.locator('polyline').count(), 3, 'recent, right, uncovered answered');
    await curve.getByText('The figures').click();
    const table = curve.getByTestId('curve-table');
    assert.deepEqual(await table.locator('thead th').allTextContents(), ['Threshold', 'Recent questions answered', 'Labelled questions answered right', 'Uncovered questions answered anyway']);
    const atDefault = await table.locator('tbody tr', { hasText: '0.55' }).locator('td').allTextContents();
    assert.equal(atDefault[0], '67 %');
    assert.equal(atDefault[2], '0 %', 'the gift-card question is not answered at 0.55');
    assert.deepEqual(await seriousViolations(page), []);
    // A file naming an entry that does not exist is refused with the reason, the plot kept.
    await curve.locator('input[type=file]').setInputFiles({ name: 'bad.jsonl', mimeType: 'application/json', buffer: Buffer.from('{"question":"x","expected":"No such entry?"}') });
    await curve.getByRole('alert').getByText(/"No such entry\?" is no question of the knowledge base/).waitFor();
    assert.equal(await curve.locator('polyline').count(), 3);
  });

  it('an admin sets the threshold from the plot: replies use it from the next question, audited, and it goes back to the server\'s', async () => {
    const question = 'where is the parcel I ordered yesterday';
    const atDefault = await consoleCall<{ handoff: boolean; confidence: number }>(server, 'tryKb', { question });
    assert.equal(atDefault.handoff, false);
    assert.ok(atDefault.confidence < 0.99, `a partial match: ${atDefault.confidence}`);
    const above = Math.min(1, Math.ceil(atDefault.confidence * 100 + 1) / 100);
    const curve = page.locator('.threshold-curve');
    await curve.getByTestId('threshold-input').fill(String(above));
    await curve.getByRole('button', { name: 'Use it' }).click();
    await curve.getByTestId('threshold-status').getByText(`The threshold is now ${above}, for every client, from the next question.`).waitFor();
    await curve.getByText(new RegExp(`^At ${above}, the threshold in force`)).waitFor();
    assert.equal((await consoleCall<{ handoff: boolean }>(server, 'tryKb', { question })).handoff, true, 'the engine thread reads it at the next question');
    await curve.getByRole('button', { name: "Back to the server's 0.55" }).click();
    await curve.getByText(/^At 0.55, the threshold in force/).waitFor();
    assert.equal((await consoleCall<{ handoff: boolean }>(server, 'tryKb', { question })).handoff, false);
    const audit = await consoleCall<Array<{ action: string; detail: string | null }>>(server, 'listAudit', { action: 'kb_threshold' });
    assert.deepEqual(audit.map((a) => JSON.parse(a.detail ?? '{}')).reverse(), [{ from: 0.55, to: above }, { from: above, to: 0.55, default: true }]);
    assert.deepEqual(await seriousViolations(page), []);
  });

  it('a hung service (SIGSTOP) is noticed: Reconnecting then Offline, a click on a conversation loads then offers Retry, and SIGCONT brings it all back', async () => {
    // The server pings every 15 s; the test shortens the console's patience (and its longest wait
    // between reconnects) through the page, as the console allows.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    await context.addInitScript('window.switchboardTiming = { streamSilenceMs: 2000, loadTimeoutMs: 2000, reconnectMaxMs: 1000 }');
    const hung = await context.newPage();
    hung.setDefaultTimeout(20_000);
    await hung.goto(server.console);
    await hung.waitForSelector('[data-testid=connection][data-state=live]');
    await hung.locator('[data-testid=needs-you-count]').waitFor();
    // The list must be on screen before the service stops: on a loaded machine its first page can
    // still be on its way when the stream is already live, and the row clicked below would never come.
    await row(hung, 'Alice Chen').waitFor();
    const count = await hung.locator('[data-testid=needs-you-count]').textContent();
    try {
      server.child.kill('SIGSTOP');
      const stoppedAt = Date.now();
      await hung.waitForSelector('[data-testid=connection][data-state=reconnecting], [data-testid=connection][data-state=offline]', { timeout: 6_000 });
      await hung.waitForSelector('[data-testid=connection][data-state=offline]:has-text("Offline since")', { timeout: 10_000 });
      assert.ok(Date.now() - stoppedAt < 12_000);
      // "Offline since …" and "Reconnect now" take the room of "Live": the header stays one row at 1280 px, and at 1024.
      const rows = (): Promise<number> =>
        js<number>(
          hung,
          `(() => { const kids = [...document.querySelector('header.top').children].filter((k) => !k.classList.contains('endpoint') && k.getBoundingClientRect().width > 1);
            const mids = kids.map((k) => { const r = k.getBoundingClientRect(); return (r.top + r.bottom) / 2; }); return Math.max(...mids) - Math.min(...mids) < 16 ? 1 : 2; })()`,
        );
      assert.equal(await rows(), 1, 'offline, the header is still one row');
      const size = hung.viewportSize()!;
      await hung.setViewportSize({ width: 1024, height: 700 });
      // The fold follows the resize in the next frame.
      await waitFor('offline at 1024 px, the header still one row ("Offline", its time in the tooltip)', async () => (await rows()) === 1);
      await hung.setViewportSize(size);
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
