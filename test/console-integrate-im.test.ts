import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import type { ServeProcess } from './helpers/processes.ts';
import { chooseLanguage, CHROMIUM, consoleCall, SHOTS, stopServe, useTheme, waitFor } from './helpers/console-session.ts';
import { integratePanel, RUNNERS, seriousViolations, startIntegrateSession } from './helpers/integrate-panel.ts';
import { signBody } from './helpers/sign.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

/**
 * The Integrate panel for an IM integrator (issue 11, found by a review): the client's reply
 * settings, an auto_dialog sender and a receiver for the deliveries, each copied out of the page
 * and run against the live server.
 */
describe('Clients → Integrate for IM: reply settings, the auto_dialog snippet, the receiver', { skip }, () => {
  let server: ServeProcess;
  let browser: Browser;
  let page: Page;
  let cliSecret: string;
  const work = mkdtempSync(join(tmpdir(), 'sb-snippets-im-'));
  const receivers: ChildProcess[] = [];
  const { panel, openIntegrate, kind, copySnippet, runSnippet } = integratePanel(() => page, work);

  before(async () => {
    ({ server, browser, page, cliSecret } = await startIntegrateSession());
  });
  after(async () => {
    for (const child of receivers) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await browser?.close();
    await stopServe(server);
  });

  const IM = /^IM chat \(auto_dialog/;
  const RECEIVER = /^Receiver for the replies/;
  const setting = (key: string) => page.getByTestId('reply-settings').locator(`[data-setting="${key}"] dd`);
  const settingsForm = () => page.locator('[data-client="acme"] form.settings');

  /** The panel in a window tall enough to show it whole, for looking at it as an integrator. */
  async function shootIm(name: string): Promise<void> {
    const size = page.viewportSize()!;
    await page.setViewportSize({ width: size.width, height: 2600 });
    await panel().screenshot({ path: join(SHOTS, `integrate-im-${name}.png`) });
    await page.setViewportSize(size);
  }

  /** Changes one reply setting the way an operator does: the panel's button, the form, Save. */
  async function saveSetting(label: string, value: string): Promise<void> {
    await page.getByTestId('edit-reply-settings').click();
    const field = settingsForm().getByLabel(label, { exact: true });
    await waitFor('the settings form to take the focus', async () => (await settingsForm().evaluate((f) => f.contains(f.ownerDocument.activeElement))) || null);
    await field.fill(value);
    await settingsForm().getByRole('button', { name: 'Save settings' }).click();
    await settingsForm().getByRole('button', { name: 'Saved' }).waitFor();
  }

  /** A receiver snippet run as its header says, with port 0: resolves with the address it prints. */
  async function startReceiver(language: 'node' | 'python', code: string): Promise<{ url: string; child: ChildProcess; output: () => string }> {
    const file = join(work, language === 'node' ? 'receive.mjs' : 'receive.py');
    writeFileSync(file, code);
    const { SWITCHBOARD_SECRET: _none, ...base } = process.env;
    const child = spawn(language === 'node' ? process.execPath : 'python3', [file, '0'], { cwd: work, env: { ...base, SWITCHBOARD_SECRET: cliSecret }, stdio: ['ignore', 'pipe', 'pipe'] });
    receivers.push(child);
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const url = await waitFor(`the ${language} receiver's address`, async () => /^Receiving deliveries for acme at (http:\/\/127\.0\.0\.1:\d+\/)$/m.exec(out)?.[1], 10_000);
    return { url, child, output: () => out };
  }

  const deliver = (url: string, body: Record<string, unknown>, key: string) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify(body) });

  it('reply settings: a bare client shows no send_url, no bound account, no bot ids, policy mention, and the group warning', async () => {
    await page.click('nav [data-view="clients"]');
    await openIntegrate('acme');
    assert.match((await setting('sendUrl').textContent()) ?? '', /^none: every auto_dialog must carry its own send_url$/);
    assert.match((await setting('boundAccount').textContent()) ?? '', /^none/);
    assert.match((await setting('botIds').textContent()) ?? '', /^none/);
    assert.match((await setting('groupPolicy').textContent()) ?? '', /^mention \(answers a group message only when it @-mentions the bound account or a bot id/);
    assert.match((await setting('fallbackText').textContent()) ?? '', /nothing is delivered/);
    assert.equal(await page.getByTestId('group-warning').textContent(), 'Group messages are never answered until you set a bound account or bot ids (Reply settings).');
  });

  it('IM chat without a default send_url: a marked placeholder that stops the snippet, and the panel says how to set one', async () => {
    await kind(IM).check();
    assert.equal(await kind(IM).isChecked(), true);
    assert.match((await page.getByTestId('send-url-note').textContent()) ?? '', /no default send_url.*Reply settings, or npm run cli -- clients set acme --send-url URL/);
    assert.match((await page.getByTestId('fallback-note').textContent()) ?? '', /no fallback text: a message the engine cannot answer gets a scheduled reply that never arrives/);
    const code = await copySnippet('node');
    assert.match(code, /const SEND_URL = "https:\/\/CHANGE-ME\.invalid\/switchboard-replies";  \/\/ CHANGE ME/);
    writeFileSync(join(work, 'send_im.mjs'), code);
    const { SWITCHBOARD_SECRET: _none, ...base } = process.env;
    const result = spawnSync(process.execPath, [join(work, 'send_im.mjs')], { env: { ...base, SWITCHBOARD_SECRET: cliSecret }, encoding: 'utf8' });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /put your receiver's URL in SEND_URL first/);
    // The choices are radios: one tab stop, arrows move.
    await kind(IM).focus();
    await page.keyboard.press('ArrowDown');
    assert.equal(await kind(RECEIVER).isChecked(), true);
    await page.waitForSelector('[data-testid=snippet][data-kind=receiver]');
    assert.deepEqual(await panel().getByRole('tab').allTextContents(), ['Python', 'Node.js'], 'no curl receiver');
    await page.keyboard.press('ArrowUp');
    await page.waitForSelector('[data-testid=snippet][data-kind=auto_dialog]');
    const failures: string[] = [];
    for (const lang of ['en', 'zh-CN'] as const) {
      await chooseLanguage(page, lang);
      for (const theme of ['light', 'dark'] as const) {
        await useTheme(page, theme);
        for (const line of await seriousViolations(page)) failures.push(`im-${theme}-${lang}: ${line}`);
        await shootIm(`im-no-send-url-${theme}-${lang}`);
      }
    }
    await chooseLanguage(page, 'en');
    await useTheme(page, 'light');
    assert.deepEqual(failures, []);
  });

  it('a send_url that is no URL: the banner names the field and the value, has Dismiss, and the next save that works clears it', async () => {
    await page.getByTestId('edit-reply-settings').click();
    await settingsForm().getByLabel('Default send_url', { exact: true }).fill('127.0.0.1:9011/hook');
    await settingsForm().getByRole('button', { name: 'Save settings' }).click();
    const banner = page.locator('[role="alert"].error');
    await banner.waitFor();
    assert.equal((await banner.locator('span').textContent()) ?? '', 'Something went wrong: Default send_url "127.0.0.1:9011/hook": must be an absolute http or https URL');
    await banner.getByRole('button', { name: 'Dismiss' }).click();
    await banner.waitFor({ state: 'detached' });
    await settingsForm().getByRole('button', { name: 'Save settings' }).click();
    await banner.waitFor();
    await settingsForm().getByLabel('Default send_url', { exact: true }).fill('');
    await settingsForm().getByRole('button', { name: 'Save settings' }).click();
    await settingsForm().getByRole('button', { name: 'Saved' }).waitFor();
    assert.equal(await banner.count(), 0);
    assert.match((await setting('sendUrl').textContent()) ?? '', /^none/);
  });

  for (const language of ['node', 'python'] as const) {
    it(`IM chat end to end (${language}): the receiver and the auto_dialog snippet, copied out of the page; the reply arrives, verified`, { skip: RUNNERS[language].skip }, async () => {
      await kind(RECEIVER).check();
      const receiver = await startReceiver(language, await copySnippet(language));
      await saveSetting('Default send_url', receiver.url);
      assert.equal(await setting('sendUrl').textContent(), receiver.url);
      await kind(IM).check();
      assert.equal(await page.getByTestId('send-url-note').count(), 0);
      await panel().getByRole('textbox', { name: /Message text/ }).fill('How do I reset my password?');
      const code = await copySnippet(language);
      assert.ok(code.includes(JSON.stringify(receiver.url)) && !code.includes('CHANGE-ME'), 'send_url is the client default');
      const { status, body } = await runSnippet(language, code, { SWITCHBOARD_SECRET: cliSecret });
      assert.equal(status, 200);
      assert.deepEqual([body['event_type'], body['reply']], ['auto_dialog', { scheduled: true, reason: 'scheduled' }]);
      // Quiet period (2 s) and the engine: the receiver prints the verified reply, and answered 200.
      const key = await waitFor('the delivered reply', async () => /^200 reply (r_\S+) to integration-test: Settings > Security > Reset password\.$/m.exec(receiver.output())?.[1], 12_000);
      type Transcript = import('../src/shared/console-api.ts').ConsoleOutputs['getTranscript'];
      const delivery = await waitFor('Switchboard to record the 200', async () => {
        const { entries } = await consoleCall<Transcript>(server, 'getTranscript', { conversationId: body['conversation_id'] });
        const d = entries.find((e) => e.msgId === key)?.delivery;
        return d?.state === 'sent' ? d : null;
      });
      assert.equal(delivery.attempts, 1, 'accepted at the first attempt');
      const info = { msg_id: key, reply_to: ['m-x'], to_user_id: 'integration-test', content: 'again', message_type: 1, event_type: 'auto_dialog', from_user_type: 4 };
      const now = Math.floor(Date.now() / 1000);
      // Forged: a wrong signature, and a right one that is too old. 503, so Switchboard would retry.
      const forged = { ...signBody('acme', cliSecret, { ...info, msg_id: 'r_forged' }, now), signature: 'ab'.repeat(32) };
      assert.equal((await deliver(receiver.url, forged, 'r_forged')).status, 503);
      assert.equal((await deliver(receiver.url, signBody('acme', cliSecret, { ...info, msg_id: 'r_old' }, now - 301), 'r_old')).status, 503);
      assert.equal((await deliver(receiver.url, signBody('acme', 'not-the-secret', info, now), key)).status, 503);
      // The same reply again (a retry after a lost 200): acknowledged, not printed twice.
      assert.equal((await deliver(receiver.url, signBody('acme', cliSecret, info, now), key)).status, 200);
      const out = receiver.output();
      assert.equal(out.split('\n').filter((l) => l.startsWith(`200 reply ${key} `)).length, 1, out);
      assert.equal(out.split('\n').filter((l) => l.startsWith('503 refused')).length, 3, out);
      assert.ok(!out.includes('again') && !out.includes('r_forged'), out);
      receiver.child.kill('SIGTERM');
      if (receiver.child.exitCode === null && receiver.child.signalCode === null) await once(receiver.child, 'exit');
    });
  }

  it('a bound account set in Reply settings ends the group warning; the receiver choice passes axe too', async () => {
    assert.equal(await page.getByTestId('group-warning').count(), 1);
    await saveSetting('Bound account', 'bot-acme');
    await page.getByTestId('group-warning').waitFor({ state: 'detached' });
    const size = page.viewportSize()!;
    await page.setViewportSize({ width: size.width, height: 3200 });
    await page.locator('[data-client="acme"]').screenshot({ path: join(SHOTS, 'integrate-im-settings-open.png') });
    await page.setViewportSize(size);
    assert.equal(await setting('boundAccount').textContent(), 'bot-acme');
    await shootIm('im-send-url');
    await kind(RECEIVER).check();
    const failures: string[] = [];
    for (const theme of ['light', 'dark'] as const) {
      await useTheme(page, theme);
      for (const line of await seriousViolations(page)) failures.push(`receiver-${theme}: ${line}`);
      await shootIm(`receiver-${theme}`);
    }
    await useTheme(page, 'light');
    assert.deepEqual(failures, []);
  });
  it('"not mentioned" on a client with no bound account and no bot ids says that no mention can wake the bot', async () => {
    const { secret } = await consoleCall<{ secret: string }>(server, 'addClient', { id: 'bare-group', settings: {} });
    const info = { event_type: 'auto_dialog', msg_id: 'g-hint-1', group_id: 'room-hint', from_user_id: 'u-hint', from_user_type: 2, at_list: ['bot-acme'], content: '@bot-acme are you there?', send_url: 'http://127.0.0.1:9/hook' };
    const res = await fetch(server.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signBody('bare-group', secret, info, Math.floor(Date.now() / 1000))) });
    const body = (await res.json()) as { conversation_id: string; reply: { reason: string } };
    assert.equal(body.reply.reason, 'not_mentioned');
    await page.reload(); // the console learns of the new client at its start
    await page.click('nav [data-view="conversations"]');
    await page.click(`[data-conversation="${body.conversation_id}"]`);
    const hint = page.getByTestId('no-bot-ids');
    await hint.waitFor();
    assert.match((await hint.textContent()) ?? '', /no bound account and no bot ids, so no mention can wake the bot/);
    // acme has a bound account by now: its own "not mentioned" lines carry no such hint.
    const other = { ...info, msg_id: 'g-hint-2', group_id: 'room-hint-2', at_list: ['someone-else'], content: 'hello all' };
    const res2 = await fetch(server.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signBody('acme', cliSecret, other, Math.floor(Date.now() / 1000))) });
    const body2 = (await res2.json()) as { conversation_id: string; reply: { reason: string } };
    assert.equal(body2.reply.reason, 'not_mentioned');
    await page.click(`[data-conversation="${body2.conversation_id}"]`);
    await page.waitForSelector('text=hello all');
    assert.equal(await page.getByTestId('no-bot-ids').count(), 0);
  });
});
