import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { buildConsole, chooseLanguage, CHROMIUM, consoleCall, launchChromium, openConsole, sendAs, SHOTS, startServe, stopServe, useTheme } from './helpers/console-session.ts';
import { seriousViolations } from './helpers/axe.ts';
import type { AuditItem, ConsoleOutputs } from '../src/shared/console-api.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
const QUESTIONS = ['How do I reset my password?', 'How do I delete my account?', 'password reset link expired', 'where can I see orders', 'Where is my order?', 'I want a discount on my order'];

describe('the Replay view: a threshold tried on past questions, side by side, axe clean', { skip }, () => {
  let server: ServeProcess;
  let browser: Browser;
  let page: Page;

  before(async () => {
    buildConsole();
    mkdirSync(SHOTS, { recursive: true });
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-replay-view-'));
    const secret = secretFrom(cli(dataDir, 'clients', 'add', 'acme').stdout);
    cli(dataDir, 'kb', 'add', '--question', 'How do I reset my password?', '--answer', 'Use "Forgot password" on the sign-in page.');
    cli(dataDir, 'kb', 'add', '--question', 'Where is my order?', '--answer', 'Open Orders to track it.');
    ({ server } = await startServe(dataDir));
    let n = 0;
    for (const content of QUESTIONS) {
      const res = await sendAs(server, 'acme', secret, { event_type: 'website_dialog', msg_id: `v-${++n}`, from_user_id: `visitor-${n}`, from_user_type: 2, content });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
    browser = await launchChromium();
    page = await openConsole(browser, server);
    // The console has loaded what it shows (its list, its live stream) before it is navigated: on a
    // loaded machine a click on the nav during the first load was once not followed by the view.
    await page.waitForSelector('[data-conversation]');
    await page.waitForSelector('[data-testid=connection][data-state=live]');
    await page.click('nav [data-view="kb"]');
    await page.click('nav.subnav [data-view="replay"]');
    await page.waitForSelector('.replay-form');
  });
  after(async () => {
    await browser?.close();
    await stopServe(server);
  });

  it('shows the estimate, runs after the confirm step, and lists the changed questions and the run', async () => {
    await page.selectOption('.replay-form select >> nth=0', '24h');
    await page.getByLabel('Built-in engine threshold after (0–1)').fill('0.8');
    await page.getByRole('button', { name: 'Estimate' }).click();
    const estimate = page.getByTestId('replay-estimate');
    await estimate.getByText('6 questions').waitFor();
    await estimate.getByText('No LLM call: the built-in engine answers both ways, at no cost.').waitFor();
    assert.equal((await consoleCall<ConsoleOutputs['listReplayRuns']>(server, 'listReplayRuns')).length, 0, 'an estimate runs nothing');

    await page.getByRole('button', { name: 'Run the replay' }).click();
    const result = page.getByTestId('replay-result');
    await result.getByRole('heading', { name: /Replay 1 · done/ }).waitFor();
    const run = await consoleCall<ConsoleOutputs['getReplayRun']>(server, 'getReplayRun', { id: 1 });
    assert.ok(run.rows.length > 0, 'some question changes at 0.8');
    const rows = result.locator('.replay-changes tbody tr');
    assert.equal(await rows.count(), run.rows.length);
    for (const r of run.rows) {
      const row = rows.filter({ hasText: r.question });
      await row.locator('td').nth(0).getByText(r.before.handoff ? 'Handed off' : 'Answered').waitFor();
      await row.locator('td').nth(1).getByText(r.after.handoff ? 'Handed off' : 'Answered').waitFor();
    }
    const totals = result.locator('.replay-totals');
    await totals.getByRole('row', { name: `Answered ${run.totals!.before.answered} ${run.totals!.after.answered}` }).waitFor();
    await page.locator('.replay-runs tbody tr').filter({ hasText: 'threshold 0.8 (was 0.55)' }).waitFor();

    const audit = await consoleCall<AuditItem[]>(server, 'listAudit', { action: 'replay' });
    assert.equal(audit.length, 1);
    assert.match(audit[0]!.detail ?? '', /"run":1,"change":"start","questions":6/);
  });

  it('answers that a lower threshold adds below today\'s are flagged to check, not shown as wins', async () => {
    await page.getByLabel('Built-in engine threshold after (0–1)').fill('0.2');
    await page.getByRole('button', { name: 'Estimate' }).click();
    await page.getByRole('button', { name: 'Run the replay' }).click();
    const result = page.getByTestId('replay-result');
    await result.getByRole('heading', { name: /Replay 2 · done/ }).waitFor();
    const run = await consoleCall<ConsoleOutputs['getReplayRun']>(server, 'getReplayRun', { id: 2 });
    const doubtful = run.rows.filter((r) => !r.after.handoff && r.after.score !== null && r.after.score < 0.55).map((r) => r.question);
    assert.ok(doubtful.length > 0, `some question is answered between 0.2 and 0.55: ${JSON.stringify(run.rows.map((r) => [r.question, r.after.score]))}`);
    const flagged = result.locator('.replay-changes tbody tr').filter({ has: page.getByTestId('replay-doubtful') });
    assert.equal(await flagged.count(), doubtful.length);
    for (const q of doubtful) await flagged.filter({ hasText: q }).getByText("Check this one: matched below today's threshold (0.55).").waitFor();
    await page.getByLabel('Built-in engine threshold after (0–1)').fill('0.8');
  });

  it('estimates a replay with the pending proposals (none yet) without an error', async () => {
    await page.getByLabel('Knowledge base with the pending proposals').check();
    await page.getByRole('button', { name: 'Estimate' }).click();
    await page.getByTestId('replay-estimate').waitFor();
    assert.equal(await page.getByRole('alert').count(), 0);
    await page.getByLabel('Knowledge base with the pending proposals').uncheck();
  });

  it('passes axe in light and dark, English and Chinese, with the estimate and a result open', async () => {
    await page.getByRole('button', { name: 'Estimate' }).click();
    await page.getByTestId('replay-estimate').waitFor();
    const failures: string[] = [];
    for (const lang of ['en', 'zh-CN'] as const) {
      await chooseLanguage(page, lang);
      for (const theme of ['light', 'dark'] as const) {
        await useTheme(page, theme);
        for (const line of await seriousViolations(page)) failures.push(`replay-${theme}-${lang}: ${line}`);
        await page.screenshot({ path: join(SHOTS, `replay-${theme}-${lang}.png`), fullPage: true });
      }
    }
    await chooseLanguage(page, 'en');
    assert.deepEqual(failures, [], `serious or critical axe violations:\n${failures.join('\n')}`);
  });
});
