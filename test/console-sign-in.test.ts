import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from '@playwright/test';
import { spawnServe, type ServeProcess } from './helpers/processes.ts';
import { buildConsole, chooseLanguage, CHROMIUM, consoleCall, launchChromium, openConsole, SHOTS, stopServe, useTheme, waitFor } from './helpers/console-session.ts';
import { seriousViolations } from './helpers/axe.ts';
import type { ConsoleOutputs } from '../src/shared/console-api.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
const PASSWORD = 'a passphrase of some length';

/** axe in light and dark, in the page's language now; every serious finding is collected. */
async function axeThemes(page: Page, view: string, failures: string[]): Promise<void> {
  const lang = await page.getAttribute('html', 'lang');
  for (const theme of ['light', 'dark'] as const) {
    await useTheme(page, theme);
    for (const line of await seriousViolations(page)) failures.push(`${view}-${theme}-${lang}: ${line}`);
    await page.screenshot({ path: join(SHOTS, `sign-in-${view}-${theme}-${lang}.png`) });
  }
  await useTheme(page, 'light');
}

/** axe in light and dark, English and Chinese; the test fails once at the end with every finding. */
async function axeEverywhere(page: Page, view: string, failures: string[]): Promise<void> {
  for (const lang of ['en', 'zh-CN'] as const) {
    await chooseLanguage(page, lang);
    await axeThemes(page, view, failures);
  }
  await chooseLanguage(page, 'en');
}

describe('team sign-in in the browser (real Chromium against serve)', { skip }, () => {
  let server: ServeProcess;
  let browser: Browser;
  let agentContext: BrowserContext;
  let agent: Page;
  /** Every console API answer the agent's page got: none may be a 403 (the console asks only what the role allows). */
  const agentAnswers: Array<{ path: string; status: number; authorization: string | null }> = [];
  const a11y: string[] = [];

  before(async () => {
    buildConsole();
    mkdirSync(SHOTS, { recursive: true });
    server = await spawnServe(mkdtempSync(join(tmpdir(), 'sb-sign-in-')));
    browser = await launchChromium();
    await consoleCall(server, 'setOperator', { id: 'olga', name: 'Olga Owner' });
    agentContext = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    agent = await agentContext.newPage();
    agent.setDefaultTimeout(20_000);
    agent.on('response', (res) => {
      const path = new URL(res.url()).pathname;
      if (path.startsWith('/api/')) agentAnswers.push({ path, status: res.status(), authorization: res.request().headers()['authorization'] ?? null });
    });
  });
  after(async () => {
    await browser?.close();
    await stopServe(server);
  });

  it('the link page names the agent, checks the password on the page, and signs them in; an agent sees no admin views', async () => {
    const { link } = await consoleCall<ConsoleOutputs['addAgent']>(server, 'addAgent', { id: 'ann', name: 'Ann Lee' });
    assert.equal(link.url, `${server.consoleBase}${link.fragment}`, 'serve knows its console address: the link is whole');
    await agent.goto(link.url!);
    await agent.getByRole('heading', { name: 'Welcome, Ann Lee' }).waitFor();
    assert.equal(agent.url(), server.consoleBase, 'the secret leaves the address bar at once');
    await axeEverywhere(agent, 'link', a11y);

    const [password, again] = [agent.getByLabel('New password', { exact: true }), agent.getByLabel('New password again')];
    await password.fill('too short');
    await again.fill('too short');
    await agent.getByRole('button', { name: 'Choose password and sign in' }).click();
    assert.match(await agent.getByTestId('link-problem').textContent() ?? '', /at least 12 characters/);
    await password.fill(PASSWORD);
    await again.fill(`${PASSWORD}!`);
    await agent.getByRole('button', { name: 'Choose password and sign in' }).click();
    await agent.getByTestId('link-problem').getByText('The two passwords differ.').waitFor();
    await again.fill(PASSWORD);
    await agent.getByRole('button', { name: 'Choose password and sign in' }).click();

    const menu = agent.getByTestId('account-menu');
    await menu.waitFor();
    assert.match((await menu.textContent()) ?? '', /Ann Lee.*Agent/);
    // One "Sign out" for a screen reader (the menu's), not a second in the button's name.
    await agent.getByRole('button', { name: 'Account: Ann Lee, Agent', exact: true }).waitFor();
    const views = await agent.locator('nav [data-view]').evaluateAll((els) => els.map((e) => e.getAttribute('data-view')));
    assert.deepEqual(views, ['conversations', 'needs_you', 'dashboard', 'kb'], 'no Agents, Clients, Request log or Deliveries for an agent');
    const token = (await agent.evaluate("localStorage.getItem('sb.consoleToken')")) as string;
    assert.ok(token && token !== server.consoleToken, 'the session token is kept where the console token is');
    await agent.getByTestId('conversation-list').waitFor();
    await agent.getByTestId('account-menu').click();
    await agent.getByTestId('sign-out').waitFor();
    await axeThemes(agent, 'agent-console', a11y);
    await agent.keyboard.press('Escape');
    // The knowledge base: read and try, and Learn to propose; no entry form, no Edit or Delete, no Replay.
    await agent.click('nav [data-view="kb"]');
    await agent.getByRole('button', { name: 'Ask' }).waitFor();
    assert.equal(await agent.locator('form.entry-form').count(), 0, 'no form to add or change entries');
    assert.equal(await agent.getByRole('button', { name: 'Edit' }).count(), 0);
    assert.deepEqual(await agent.locator('nav.subnav [data-view]').evaluateAll((els) => els.map((e) => e.getAttribute('data-view'))), ['kb', 'learn']);
    await agent.click('nav [data-view="conversations"]');
    assert.ok(agentAnswers.some((a) => a.path === '/api/whoAmI' && a.status === 200 && a.authorization === `Bearer ${token}`), 'and sent as a bearer token');
  });

  it('sign-out returns to the sign-in page (another tab of that session says it ended); a wrong password gets the page\'s words; the right one signs in again', async () => {
    const otherTab = await agentContext.newPage();
    await otherTab.goto(server.consoleBase);
    await otherTab.getByTestId('account-menu').waitFor();
    await agent.getByTestId('account-menu').click();
    await agent.getByTestId('sign-out').click();
    await agent.getByTestId('signed-out').waitFor();
    // Its event stream closed with the session: it learns at once, without a click.
    await otherTab.getByTestId('session-ended').waitFor();
    await otherTab.close();
    assert.equal(await agent.evaluate("localStorage.getItem('sb.consoleToken')"), null);
    await axeEverywhere(agent, 'sign-in', a11y);

    await agent.getByLabel('Account ID').fill('ann');
    await agent.getByLabel('Password').fill('not my password at all');
    await agent.getByRole('button', { name: 'Sign in' }).click();
    assert.equal(await agent.getByTestId('sign-in-problem').textContent(), 'That account ID and password do not match an active account.');
    // Only this try's answer: "You signed out." went when they tried; the cursor waits in the emptied password field.
    assert.equal(await agent.getByTestId('signed-out').count(), 0);
    await waitFor('the password field focused', async () => agent.evaluate("document.activeElement?.getAttribute('name') === 'password'"));
    assert.equal(await agent.getByLabel('Password').inputValue(), '');
    await agent.getByLabel('Password').fill(PASSWORD);
    await agent.getByRole('button', { name: 'Sign in' }).click();
    await agent.getByTestId('account-menu').waitFor();
    await agent.getByTestId('conversation-list').waitFor();
  });

  it('the owner\'s Agents view: add shows the link once with a copy button, edit, remove after confirming; the owner cannot be disabled or removed; axe', async () => {
    const owner = await openConsole(browser, server);
    await owner.click('nav [data-view="agents"]');
    await owner.locator('tr[data-agent="olga"]').waitFor();
    const ownerRow = owner.locator('tr[data-agent="olga"]');
    assert.deepEqual(await ownerRow.getByRole('button').allTextContents(), ['Edit', 'Reset'], 'no Disable or Remove for the owner');

    await owner.getByLabel('Account ID').fill('omar');
    await owner.getByLabel('Display name').fill('Omar Haddad');
    await owner.getByLabel('Capacity').fill('3');
    await owner.getByRole('button', { name: 'Add agent' }).click();
    const dialog = owner.getByTestId('sign-in-link');
    await dialog.waitFor();
    assert.match((await owner.getByTestId('sign-in-link-value').textContent()) ?? '', new RegExp(`^${server.consoleBase}#sign-in-link=[A-Za-z0-9_-]{43}$`));
    assert.equal(await owner.getByTestId('copy-sign-in-link-value').getAttribute('aria-label'), 'Copy Sign-in link');
    await axeThemes(owner, 'agents-link', a11y);
    await dialog.getByRole('button', { name: 'Done' }).click();
    const row = owner.locator('tr[data-agent="omar"]');
    // The confirmation and the link dialog in Chinese: Reset makes a new link.
    await chooseLanguage(owner, 'zh-CN');
    await row.getByRole('button', { name: '重置' }).click();
    await axeThemes(owner, 'agents-confirm', a11y);
    await owner.getByTestId('confirm-reset').getByRole('button', { name: '重置并生成链接' }).click();
    await dialog.waitFor();
    await axeThemes(owner, 'agents-link', a11y);
    await dialog.getByRole('button', { name: '完成' }).click();
    await chooseLanguage(owner, 'en');
    assert.match((await row.textContent()) ?? '', /Omar Haddad.*Agent3Invited \(no password yet\)link valid until/);

    await row.getByRole('button', { name: 'Edit' }).click();
    await owner.getByTestId('edit-agent').getByLabel('Capacity').fill('4');
    await owner.getByTestId('edit-agent').getByRole('button', { name: 'Save' }).click();
    await row.locator('td:nth-child(3)', { hasText: '4' }).waitFor();
    await axeEverywhere(owner, 'agents', a11y);

    await row.getByRole('button', { name: 'Remove' }).click();
    await owner.getByTestId('confirm-remove').getByRole('button', { name: 'Remove Omar Haddad' }).click();
    await row.waitFor({ state: 'detached' });
    await owner.context().close();
  });

  it("the owner's Agents table follows the team live: an agent who sets their password and signs in shows Active and Online without leaving the view", async () => {
    const owner = await openConsole(browser, server);
    await owner.click('nav [data-view="agents"]');
    await owner.locator('tr[data-agent="olga"]').waitFor();
    // Added elsewhere (the CLI, another admin): this view is not told of it.
    const { link } = await consoleCall<ConsoleOutputs['addAgent']>(server, 'addAgent', { id: 'kofi', name: 'Kofi Mensah' });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    const kofi = await context.newPage();
    await kofi.goto(link.url!);
    await kofi.getByLabel('New password', { exact: true }).fill(PASSWORD);
    await kofi.getByLabel('New password again').fill(PASSWORD);
    await kofi.getByRole('button', { name: 'Choose password and sign in' }).click();
    await kofi.getByTestId('conversation-list').waitFor();
    const row = owner.locator('tr[data-agent="kofi"]');
    await row.locator('td:has-text("Online")').waitFor();
    assert.match((await row.textContent()) ?? '', /Kofi Mensah.*Active/);
    await context.close();
    await owner.context().close();
  });

  it('the audit tab filters by agent, action and conversation, and shows the address each action came from', async () => {
    const owner = await openConsole(browser, server);
    await owner.click('nav [data-view="agents"]');
    await owner.getByRole('tab', { name: 'Audit log' }).click();
    await owner.getByTestId('audit-table').waitFor();
    await owner.locator('tr[data-audit][data-action="agent"]').first().waitFor();
    await owner.getByLabel('Action').selectOption('sign_in');
    // The filtered list replaces the whole one when it arrives.
    const actions = await waitFor('the sign-ins only', async () => {
      const shown = await owner.locator('tr[data-audit]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')));
      return shown.length > 0 && shown.every((a) => a === 'sign_in') && shown;
    });
    assert.ok(actions.length >= 2, actions.join());
    assert.match((await owner.locator('tr[data-audit] td.address').first().textContent()) ?? '', /^(::ffff:)?127\.0\.0\.1$/);
    await axeEverywhere(owner, 'audit', a11y);
    await owner.locator('.audit-filters select').first().selectOption('olga');
    await owner.getByText('No audit rows match these filters.').waitFor();
    await owner.context().close();
  });

  it('an admin disabling the agent sends their open console back to the sign-in page: "your session ended"', async () => {
    await consoleCall(server, 'setAgentDisabled', { id: 'ann', disabled: true });
    await agent.getByTestId('session-ended').waitFor();
    assert.equal(await agent.evaluate("localStorage.getItem('sb.consoleToken')"), null);
    assert.deepEqual(agentAnswers.filter((a) => a.status === 403), [], 'the agent\'s console never asked for what its role may not');
    assert.deepEqual(a11y, [], 'axe: no serious or critical findings');
  });

  it('too many failed sign-ins: the page says how long to wait (429), in the page\'s words', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    await page.goto(server.consoleBase);
    await page.getByTestId('auth-problem').waitFor();
    // A fresh page speaks to agents first; the owner's way in is one short line, the commands under it as code.
    await page.getByText('Sign in with the account ID and password your admin gave you.').waitFor();
    await page.locator('[data-testid=auth-problem] summary:text("Owner of this installation? Open the console URL that serve printed.")').waitFor();
    for (const lang of ['en', 'zh-CN'] as const) {
      await chooseLanguage(page, lang);
      await page.evaluate("document.querySelector('[data-testid=auth-problem]').open = true");
      const text = (await page.evaluate('document.body.innerText')) as string;
      assert.ok(!text.includes('`'), `no literal backtick (${lang}): ${text}`);
      assert.deepEqual(await page.locator('[data-testid=auth-problem] code').allTextContents(), ['npm run serve', 'npm run cli -- console rotate-token'], lang);
      await axeThemes(page, 'fresh-sign-in', a11y);
    }
    await chooseLanguage(page, 'en');
    assert.deepEqual(a11y, [], 'axe: no serious or critical findings');
    for (let i = 1; i <= 6; i++) {
      await page.getByLabel('Account ID').fill('nobody');
      await page.getByLabel('Password').fill(`guess number ${i}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const problem = page.getByTestId('sign-in-problem');
      const expected = i <= 5 ? 'That account ID and password do not match an active account.' : 'Too many failed sign-ins. Wait 15 minutes, then try again.';
      await problem.getByText(expected).waitFor();
    }
    await context.close();
  });
});
