import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import type { ServeProcess } from './helpers/processes.ts';
import { chooseLanguage, CHROMIUM, consoleCall, SHOTS, stopServe, useTheme } from './helpers/console-session.ts';
import { integratePanel, RUNNERS, seriousViolations, startIntegrateSession } from './helpers/integrate-panel.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

const nav = (page: Page, view: string) => page.click(`nav [data-view="${view}"]`);

describe('Clients → Integrate: endpoint, client id, snippets that run, a live test message (issue 11)', { skip }, () => {
  let server: ServeProcess;
  let browser: Browser;
  let page: Page;
  let cliSecret: string;
  let rotated: string;
  const work = mkdtempSync(join(tmpdir(), 'sb-snippets-'));
  const { panel, openIntegrate, kind, copySnippet, runSnippet } = integratePanel(() => page, work);

  before(async () => {
    ({ server, browser, page, cliSecret } = await startIntegrateSession());
  });
  after(async () => {
    await browser?.close();
    await stopServe(server);
  });

  /** The whole panel (the view scrolls inside the page, so the window grows for the picture). */
  async function shootPanel(name: string): Promise<void> {
    const size = page.viewportSize()!;
    await page.setViewportSize({ width: size.width, height: 2400 });
    await panel().screenshot({ path: join(SHOTS, `integrate-${name}.png`) });
    await page.setViewportSize(size);
  }

  it('an existing client: the real endpoint and the client id; the secret is not shown, and the panel says why', async () => {
    await nav(page, 'clients');
    await openIntegrate('acme');
    assert.equal(await page.getByTestId('integrate-endpoint').textContent(), server.endpoint);
    assert.match(server.endpoint, /^http:\/\/127\.0\.0\.1:\d+\/custom-im\/chat-messages$/);
    assert.equal(await page.getByTestId('integrate-client-id').textContent(), 'acme');
    assert.equal(await page.getByTestId('integrate-secret').count(), 0);
    assert.match((await page.getByTestId('secret-note').textContent()) ?? '', /shows a secret only once.*SWITCHBOARD_SECRET/);
    for (const language of ['python', 'node', 'curl'] as const) {
      const code = await copySnippet(language);
      assert.ok(code.includes(server.endpoint) && code.includes('acme'), `${language}: endpoint and client id filled in`);
      assert.ok(code.includes('SWITCHBOARD_SECRET') && !code.includes(cliSecret), `${language}: the secret comes from the environment`);
    }
  });

  for (const language of ['node', 'python', 'curl'] as const) {
    it(`the ${language} snippet, copied out of the page, gets a 200 from the live server with the secret in SWITCHBOARD_SECRET`, { skip: RUNNERS[language].skip }, async () => {
      const code = await copySnippet(language);
      const { status, body } = await runSnippet(language, code, { SWITCHBOARD_SECRET: cliSecret });
      assert.equal(status, 200);
      assert.equal(body['event_type'], 'website_dialog');
    });
  }

  it('the language tabs: one tab stop, arrows and Home/End move between languages', async () => {
    const tab = (name: string) => panel().getByRole('tab', { name });
    await tab('Python').click();
    assert.equal(await tab('Python').getAttribute('aria-selected'), 'true');
    assert.deepEqual(await panel().getByRole('tab').evaluateAll((tabs) => tabs.map((t) => t.getAttribute('tabindex'))), ['0', '-1', '-1']);
    await page.keyboard.press('ArrowRight');
    assert.equal(await tab('Node.js').getAttribute('aria-selected'), 'true');
    assert.equal(await tab('Node.js').evaluate((el) => el.matches(':focus')), true, 'focus follows the selection');
    await page.waitForSelector('[data-testid=snippet][data-language=node]');
    await page.keyboard.press('End');
    await page.waitForSelector('[data-testid=snippet][data-language=curl]');
    await page.keyboard.press('ArrowRight');
    await page.waitForSelector('[data-testid=snippet][data-language=python]');
    const panelId = await tab('Python').getAttribute('aria-controls');
    assert.equal(await page.locator(`[role=tabpanel][id="${panelId}"]`).getAttribute('aria-labelledby'), await tab('Python').getAttribute('id'));
  });

  it('after "Rotate secret" the panel fills in the new secret, and every snippet runs as copied', async () => {
    await page.locator('[data-client="acme"]').getByRole('button', { name: 'Rotate secret' }).click();
    const dialog = page.getByRole('dialog');
    rotated = (await dialog.getByTestId('secret-value').textContent()) ?? '';
    assert.match(rotated, /^[A-Za-z0-9_-]{43}$/);
    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await page.getByTestId('integrate-secret').textContent(), rotated);
    assert.match((await page.getByTestId('secret-note').textContent()) ?? '', /just made it/);
    for (const language of ['node', 'python', 'curl'] as const) {
      const code = await copySnippet(language);
      assert.ok(code.includes(rotated), `${language}: the new secret is filled in`);
      if (RUNNERS[language].skip) continue;
      const { status } = await runSnippet(language, code, {});
      assert.equal(status, 200, `${language} with the secret filled in`);
    }
    // The receiver too: it verifies the deliveries, signed with the newest secret.
    await kind(/^Receiver for the replies/).check();
    for (const language of ['python', 'node'] as const) assert.ok((await copySnippet(language)).includes(`SECRETS = [${JSON.stringify(rotated)}]`), `${language} receiver: the new secret`);
    await kind(/^Website chat/).check();
  });

  it('"Send a test message" shows the whole response: status, headers, body, and what it means', async () => {
    const text = panel().getByRole('textbox', { name: /Message text/ });
    // A question the knowledge base has no entry for first: the test visitor's conversation keeps
    // its messages as context, as any conversation does.
    await text.fill('Do you ship to the moon?');
    assert.match((await page.getByTestId('snippet').textContent()) ?? '', /Do you ship to the moon\?/, 'the snippets send the same text');
    await panel().getByRole('button', { name: 'Send a test message' }).click();
    await page.getByTestId('test-response').waitFor();
    assert.match((await page.getByTestId('test-summary').textContent()) ?? '', /^Handed off to a human: no knowledge-base entry matched\. Add a knowledge-base entry for this question and it gets answered\. \(A test message is resolved at once: it leaves nothing in Needs you\.\) Open the knowledge base$/);
    assert.match((await page.getByTestId('test-status').textContent()) ?? '', /^HTTP 200 · request_id req_\S+ · \d+ ms$/);
    assert.equal((JSON.parse((await page.getByTestId('test-body').textContent()) ?? '{}') as { reply: { handoff: boolean } }).reply.handoff, true);

    await text.fill('How do I reset my password?');
    await panel().getByRole('button', { name: 'Send a test message' }).click();
    await page.getByTestId('test-summary').filter({ hasText: 'Answered' }).waitFor();
    assert.match((await page.getByTestId('test-status').textContent()) ?? '', /^HTTP 200 · request_id req_\S+ · \d+ ms$/);
    const headers = (await page.getByTestId('test-headers').textContent()) ?? '';
    assert.match(headers, /^content-type: application\/json/m);
    assert.match(headers, /^x-request-id: req_\S+$/m);
    const body = JSON.parse((await page.getByTestId('test-body').textContent()) ?? '{}') as { event_type: string; reply: { content: string; handoff: boolean } };
    assert.equal(body.event_type, 'website_dialog');
    assert.deepEqual([body.reply.content, body.reply.handoff], ['Settings > Security > Reset password.', false]);
    assert.match((await page.getByTestId('test-summary').textContent()) ?? '', /^Answered from the knowledge base\. Entry “How do I reset my password\?” \(score [\d.]+\)$/);
    assert.match((await page.getByTestId('test-sent').textContent()) ?? '', /"content": "How do I reset my password\?"/);
    await shootPanel('answered');
  });

  it('the console API says how the answer came about, and never returns the secret', async () => {
    type Out = import('../src/shared/console-api.ts').ConsoleOutputs['sendTestMessage'];
    const miss = await consoleCall<Out>(server, 'sendTestMessage', { clientId: 'acme', content: 'Zebra quokka xylophone?' });
    assert.equal(miss.endpoint, server.endpoint);
    assert.deepEqual(miss.sent, { event_type: 'website_dialog', msg_id: miss.sent['msg_id'], from_user_id: 'switchboard-console-test', content: 'Zebra quokka xylophone?' });
    assert.equal(miss.headers['x-request-id'], miss.requestId);
    assert.equal(miss.headers['date'], undefined, 'connection headers left out');
    assert.ok(miss.answer);
    assert.equal(miss.answer.engine, 'kb');
    const hit = await consoleCall<Out>(server, 'sendTestMessage', { clientId: 'acme', content: 'How do I reset my password?' });
    assert.deepEqual([hit.answer?.handoff, hit.answer?.engine, hit.answer?.sources[0]?.question], [false, 'kb', 'How do I reset my password?']);
    for (const out of [miss, hit]) assert.ok(!JSON.stringify(out).includes(rotated) && !JSON.stringify(out).includes(cliSecret));
  });

  it('errors come back as data and are shown', async () => {
    await consoleCall(server, 'setClientEnabled', { id: 'acme', enabled: false });
    await panel().getByRole('button', { name: 'Send a test message' }).click();
    assert.match((await page.getByTestId('test-error').textContent()) ?? '', /client "acme" is disabled; enable it first/);
    await consoleCall(server, 'setClientEnabled', { id: 'acme', enabled: true });
  });

  it('axe-core: no serious or critical finding on the panel, light and dark, English and Chinese', async () => {
    await panel().getByRole('button', { name: 'Send a test message' }).click();
    await page.getByTestId('test-response').waitFor();
    const failures: string[] = [];
    for (const lang of ['en', 'zh-CN'] as const) {
      await chooseLanguage(page, lang);
      for (const theme of ['light', 'dark'] as const) {
        await useTheme(page, theme);
        await page.waitForTimeout(50);
        for (const line of await seriousViolations(page)) failures.push(`${theme}-${lang}: ${line}`);
        await shootPanel(`${theme}-${lang}`);
      }
    }
    await chooseLanguage(page, 'en');
    await useTheme(page, 'light');
    assert.deepEqual(failures, []);
  });

  it('leaving Clients forgets the secret: back in the panel it is hidden again', async () => {
    assert.ok((await page.content()).includes(rotated), 'still shown right after the rotation');
    await nav(page, 'kb');
    await nav(page, 'clients');
    await openIntegrate('acme');
    assert.equal(await page.getByTestId('integrate-secret').count(), 0);
    assert.ok(!(await page.content()).includes(rotated), 'the secret is nowhere in the page');
    assert.ok(!((await page.getByTestId('snippet').textContent()) ?? '').includes(rotated));
    assert.equal(await page.getByTestId('test-response').count(), 0, 'the last answer went with the panel');
    await shootPanel('hidden-secret');
    // At 1024 px the long snippet lines scroll inside their box; the view itself never scrolls sideways.
    const size = page.viewportSize()!;
    await page.setViewportSize({ width: 1024, height: size.height });
    assert.equal(await page.evaluate("(() => { const m = document.querySelector('main'); return m.scrollWidth <= m.clientWidth; })()"), true);
    await page.setViewportSize(size);
  });

  it('a client created here opens its panel with its secret, and closing the panel forgets it', async () => {
    await page.fill('input[placeholder="New client ID"]', 'shop');
    await page.click('button:has-text("Add client")');
    const dialog = page.getByRole('dialog');
    const secret = (await dialog.getByTestId('secret-value').textContent()) ?? '';
    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await page.getByTestId('integrate-client-id').textContent(), 'shop');
    assert.equal(await page.getByTestId('integrate-secret').textContent(), secret);
    assert.ok(((await page.getByTestId('snippet').textContent()) ?? '').includes(secret));
    const toggle = page.locator('[data-client="shop"]').getByRole('button', { name: 'Integrate' });
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
    await toggle.click();
    await panel().waitFor({ state: 'detached' });
    await toggle.click();
    assert.equal(await page.getByTestId('integrate-secret').count(), 0);
    assert.ok(!(await page.content()).includes(secret));
  });

  it('the answer links to the conversation the test message landed in', async () => {
    await nav(page, 'clients');
    await openIntegrate('acme');
    await panel().getByRole('button', { name: 'Send a test message' }).click();
    const body = JSON.parse((await page.getByTestId('test-body').textContent()) ?? '{}') as { conversation_id: string };
    await panel().getByRole('button', { name: 'Open the conversation' }).click();
    await page.waitForSelector(`[role=option][aria-selected=true][data-conversation="${body.conversation_id}"]`);
  });
});
