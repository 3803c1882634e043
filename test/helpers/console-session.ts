import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from '@playwright/test';
import { spawnServe, type ServeProcess } from './processes.ts';
import { signBody } from './sign.ts';
import { ensureConsoleBuilt } from './build.ts';

export const ROOT = new URL('../../', import.meta.url).pathname;
export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
export const SHOTS = join(ROOT, 'test-results', 'screenshots');

/** Builds the console once per test file (electron-vite), as `npm run serve` does. */
export function buildConsole(): void {
  ensureConsoleBuilt();
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'] });
}

/** A page on the console URL serve printed (token in the fragment), as an operator opens it. */
export async function openConsole(browser: Browser, server: ServeProcess, viewport = { width: 1280, height: 760 }): Promise<Page> {
  const page = await (await browser.newContext({ viewport, locale: 'en-US' })).newPage();
  page.setDefaultTimeout(20_000); // a first page load on two busy cores can take over 10 s
  await page.goto(server.console);
  return page;
}

export async function startServe(dataDir = mkdtempSync(join(tmpdir(), 'sb-views-'))): Promise<{ server: ServeProcess; dataDir: string }> {
  return { server: await spawnServe(dataDir), dataDir };
}

/** A signed request from a client, as its integration sends it. */
export function sendAs(server: ServeProcess, client: string, secret: string, info: Record<string, unknown>): Promise<Response> {
  return fetch(server.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signBody(client, secret, info, Math.floor(Date.now() / 1000))),
  });
}

/** The console API over HTTP with the console token: for waiting on state the page then shows. */
export async function consoleCall<T>(server: ServeProcess, method: string, input: unknown = {}): Promise<T> {
  const res = await fetch(`${server.consoleBase}api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${server.consoleToken}` },
    body: JSON.stringify(input),
  });
  const body = (await res.json()) as { ok: true; value: T } | { ok: false; error: { code: string; message: string } };
  if (!body.ok) throw new Error(`${method}: ${body.error.code} ${body.error.message}`);
  return body.value;
}

/** Polls until `check` returns a value (real time: the server runs on the real clock here). */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function stopServe(server: ServeProcess | undefined): Promise<void> {
  if (!server) return;
  server.child.kill('SIGTERM');
  await server.exit();
}

/**
 * When the header is too full for its settings (sound, shortcuts, theme, language), they are in
 * its "⋯" popover: opens it and says so (the caller closes it with Escape).
 */
export async function openHeaderPrefs(page: Page): Promise<boolean> {
  const more = page.locator('header.top .more-prefs');
  if (!(await more.isVisible())) return false;
  await more.click();
  await page.locator('#header-prefs select').waitFor();
  return true;
}

/** Switches the console's language with its language select (whatever its label, in any language). */
export async function chooseLanguage(page: Page, lang: 'en' | 'zh-CN'): Promise<void> {
  const folded = await openHeaderPrefs(page);
  await page.selectOption('select:has(option[value="zh-CN"])', lang);
  if (folded) await page.keyboard.press('Escape');
  // A locator, not waitForFunction: a text predicate is evaled in the page, which the console's CSP refuses.
  await page.locator(`html[lang="${lang}"]`).waitFor({ state: 'attached' });
}

/** The theme as the CSS sees it (the header's toggle stores the same attribute). */
export async function useTheme(page: Page, theme: 'light' | 'dark'): Promise<void> {
  await page.evaluate(`document.documentElement.dataset.theme = ${JSON.stringify(theme)}`);
}

/** A conversation's row in the list, by text it shows (a name, an id). */
export function listRow(page: Page, who: string) {
  return page.locator(`[data-testid=conversation-list] [data-conversation]:has-text("${who}")`);
}

/** Opens a conversation from the Conversations view, as an agent clicks it, and waits for its transcript. */
export async function openConversation(page: Page, who: string): Promise<void> {
  await page.click('nav [data-view="conversations"]');
  await listRow(page, who).click();
  await page.waitForSelector(`[data-testid=transcript] h2:has-text("${who}")`);
}

/** A browser with the console open on its list of conversations: how most browser tests begin. */
export async function consoleOnList(server: ServeProcess, viewport = { width: 1280, height: 800 }): Promise<{ browser: Browser; page: Page }> {
  const browser = await launchChromium();
  const page = await openConsole(browser, server, viewport);
  await page.waitForSelector('[data-conversation]');
  return { browser, page };
}

/** Closes what consoleOnList and startServe opened (either may not have started). */
export async function closeConsole(browser: Browser | undefined, server: ServeProcess | undefined): Promise<void> {
  await browser?.close();
  await stopServe(server);
}
