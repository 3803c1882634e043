import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import type { ServeProcess } from './helpers/processes.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import { buildConsole, chooseLanguage, CHROMIUM, launchChromium, openConsole, SHOTS, startServe, stopServe, useTheme } from './helpers/console-session.ts';
import { addSeedClients, seedTraffic } from './helpers/console-seed.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
// axe-core is a devDependency; resolved from here so the test fails loudly if it is missing.
const AXE = createRequire(import.meta.url).resolve('axe-core');

const THEMES = ['light', 'dark'] as const;
const LANGS = ['en', 'zh-CN'] as const;
type Theme = (typeof THEMES)[number];
type Lang = (typeof LANGS)[number];

interface AxeNode {
  target: string[];
  failureSummary?: string;
}
interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: AxeNode[];
}

/** axe-core in the page: the serious and critical violations, one readable line per element. */
async function seriousViolations(page: Page): Promise<string[]> {
  // Not addScriptTag: the console's CSP (script-src 'self') refuses an inline script, and the test
  // keeps the policy on. Evaluated through the DevTools protocol, which the CSP does not govern.
  if (!(await page.evaluate("'axe' in window"))) await page.evaluate(readFileSync(AXE, 'utf8'));
  const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)`)) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.impact} ${v.id} (${v.help}) at ${n.target.join(' ')}: ${(n.failureSummary ?? '').replace(/\s+/g, ' ')}`));
}

/** Visits each view in each theme and language; collects every failure, then fails once with the whole list. */
class Audit {
  failures: string[] = [];
  checked: string[] = [];
  async check(page: Page, view: string, theme: Theme, lang: Lang): Promise<void> {
    const name = `${view}-${theme}-${lang}`;
    // Let transitions and a pending re-render settle before reading colours.
    await page.waitForTimeout(50);
    for (const line of await seriousViolations(page)) this.failures.push(`${name}: ${line}`);
    await page.screenshot({ path: join(SHOTS, `${name}.png`) });
    this.checked.push(name);
  }
}

const nav = (page: Page, view: string) => page.click(`nav [data-view="${view}"]`);

describe('every console view passes axe-core in light and dark, English and Chinese', { skip }, () => {
  let browser: Browser;
  let server: ServeProcess;
  let empty: ServeProcess;
  let receiver: Receiver;
  let page: Page;
  const audit = new Audit();

  before(async () => {
    buildConsole();
    mkdirSync(SHOTS, { recursive: true });
    receiver = await startReceiver();
    receiver.respond = () => ({ status: 400 });
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-a11y-'));
    const secrets = addSeedClients(dataDir, receiver.url);
    ({ server } = await startServe(dataDir));
    ({ server: empty } = await startServe());
    browser = await launchChromium();
    await seedTraffic(server, secrets);
    page = await openConsole(browser, server);
    await page.waitForSelector('[data-conversation]');
  });
  after(async () => {
    await browser?.close();
    await stopServe(server);
    await stopServe(empty);
    await receiver?.close();
  });

  it('conversations (transcript open), needs you, deliveries, dashboard, request log, clients, knowledge base, learn, replay, secret dialog', async () => {
    for (const lang of LANGS) {
      await chooseLanguage(page, lang);
      for (const theme of THEMES) {
        await useTheme(page, theme);
        await nav(page, 'conversations');
        await page.click('[data-conversation]:has-text("Alice Liddell")');
        await page.waitForSelector('[data-testid=why]');
        await audit.check(page, 'conversations', theme, lang);
        await nav(page, 'needs_you');
        await page.waitForSelector('[data-testid=needs-you] li');
        await audit.check(page, 'needs-you', theme, lang);
        await nav(page, 'deliveries');
        await page.waitForSelector('[data-testid=deliveries] tbody tr');
        await audit.check(page, 'deliveries', theme, lang);
        await nav(page, 'dashboard');
        await page.waitForSelector('.chart canvas');
        await audit.check(page, 'dashboard', theme, lang);
        await nav(page, 'requests');
        await page.waitForSelector('[data-testid=field-errors]');
        await page.waitForSelector('[data-testid=unverified]');
        await audit.check(page, 'requests', theme, lang);
        await nav(page, 'clients');
        await page.waitForSelector('[data-client="acme"]');
        await audit.check(page, 'clients', theme, lang);
        // The secret dialog, over the clients view: a new client each time.
        await page.fill('input[placeholder="New client ID"], input[placeholder="新客户端 ID"]', `a11y-${theme}-${lang}`);
        await page.click('.admin form.row button[type=submit]');
        await page.waitForSelector('dialog[open] [data-testid=secret-value]');
        await audit.check(page, 'secret-dialog', theme, lang);
        await page.keyboard.press('Escape');
        await page.waitForSelector('dialog', { state: 'detached' });
        await nav(page, 'kb');
        await page.waitForSelector('[data-testid=kb-table] tbody tr');
        await audit.check(page, 'knowledge-base', theme, lang);
        // Learn and Replay are the knowledge base's tabs (the nav here matches them once it is open).
        await nav(page, 'learn');
        await page.waitForSelector('[data-testid=learn-propose]');
        await audit.check(page, 'learn', theme, lang);
        await nav(page, 'replay');
        await page.waitForSelector('.replay-form');
        await audit.check(page, 'replay', theme, lang);
      }
    }
    assert.deepEqual(audit.failures, [], `serious or critical axe violations:\n${audit.failures.join('\n')}`);
  });

  it('first run: the empty console, then the endpoint, client id and a test message answer', async () => {
    const first = await openConsole(browser, empty);
    await first.waitForSelector('.first-run');
    for (const lang of LANGS) {
      await chooseLanguage(first, lang);
      for (const theme of THEMES) {
        await useTheme(first, theme);
        await audit.check(first, 'first-run', theme, lang);
      }
    }
    await chooseLanguage(first, 'en');
    await first.fill('input[placeholder="New client ID"]', 'first');
    await first.click('button:has-text("Add client")');
    await first.waitForSelector('dialog[open]');
    await first.click('dialog >> text=I have stored it');
    await first.click('button:has-text("Send a test message")');
    await first.waitForSelector('[data-testid=test-response]');
    for (const lang of LANGS) {
      await chooseLanguage(first, lang);
      for (const theme of THEMES) {
        await useTheme(first, theme);
        await audit.check(first, 'first-run-done', theme, lang);
      }
    }
    await first.close();
    assert.deepEqual(audit.failures, [], `serious or critical axe violations:\n${audit.failures.join('\n')}`);
  });

  it('checked every view in all four combinations', () => {
    const views = ['conversations', 'needs-you', 'deliveries', 'dashboard', 'requests', 'clients', 'secret-dialog', 'knowledge-base', 'learn', 'replay', 'first-run', 'first-run-done'];
    for (const view of views) for (const theme of THEMES) for (const lang of LANGS) assert.ok(audit.checked.includes(`${view}-${theme}-${lang}`), `${view}-${theme}-${lang}`);
  });
});
