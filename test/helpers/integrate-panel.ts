import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from '@playwright/test';
import { cli, secretFrom, type ServeProcess } from './processes.ts';
import { buildConsole, launchChromium, SHOTS, startServe } from './console-session.ts';

/** Helpers for the Clients → Integrate panel tests (console-integrate*.test.ts). */

const AXE = createRequire(import.meta.url).resolve('axe-core');
const run = promisify(execFile);
const has = (command: string): boolean => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;

/** How each copied snippet is run, and why it cannot be where the tool is missing. */
export const RUNNERS = {
  node: { file: 'send.mjs', command: process.execPath, skip: false as const },
  python: { file: 'send.py', command: 'python3', skip: has('python3') ? (false as const) : 'python3 is not installed' },
  curl: { file: 'send.sh', command: 'bash', skip: has('curl') && has('openssl') ? (false as const) : 'curl or openssl is not installed' },
};
export type Language = keyof typeof RUNNERS;
const TAB_NAMES: Record<Language, string> = { node: 'Node.js', python: 'Python', curl: 'curl' };

/** axe-core in the page (see console-a11y.test.ts): serious and critical violations, one line each. */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate("'axe' in window"))) await page.evaluate(readFileSync(AXE, 'utf8'));
  const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)`)) as Array<{
    id: string;
    impact: string | null;
    nodes: Array<{ target: string[]; failureSummary?: string }>;
  }>;
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.impact} ${v.id} at ${n.target.join(' ')}: ${(n.failureSummary ?? '').replace(/\s+/g, ' ')}`));
}

/**
 * `serve` with client acme (made with the CLI, as `clients add acme` leaves it) and one
 * knowledge-base entry, and the console open in Chromium with clipboard access.
 */
export async function startIntegrateSession(): Promise<{ server: ServeProcess; browser: Browser; page: Page; cliSecret: string }> {
  buildConsole();
  mkdirSync(SHOTS, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'sb-integrate-'));
  const cliSecret = secretFrom(cli(dir, 'clients', 'add', 'acme').stdout);
  assert.equal(cli(dir, 'kb', 'add', '--question', 'How do I reset my password?', '--answer', 'Settings > Security > Reset password.').status, 0);
  const { server } = await startServe(dir);
  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  // The copy buttons write to the clipboard; the test reads it back, as a paste would.
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(server.console).origin });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(server.console);
  await page.waitForSelector('nav [data-view="clients"]');
  return { server, browser, page, cliSecret };
}

/** The panel as an integrator uses it: open it, pick what the code does, copy a snippet, run it. */
export function integratePanel(page: () => Page, work: string) {
  const panel = () => page().getByTestId('integrate');
  return {
    panel,
    async openIntegrate(client: string): Promise<void> {
      await page().locator(`[data-client="${client}"]`).getByRole('button', { name: 'Integrate' }).click();
      await panel().waitFor();
    },
    /** A choice of what the code does, by its label. */
    kind: (name: RegExp) => panel().getByRole('radio', { name }),

    /** Picks the language tab, presses its Copy button, and returns what the clipboard then holds. */
    async copySnippet(language: Language): Promise<string> {
      const p = page();
      await panel().getByRole('tab', { name: TAB_NAMES[language] }).click();
      await p.waitForSelector(`[data-testid=snippet][data-language=${language}]`);
      await p.getByTestId(`copy-snippet-${language}`).click();
      await p.getByTestId(`copy-snippet-${language}`).filter({ hasText: 'Copied' }).waitFor();
      const copied = (await p.evaluate('navigator.clipboard.readText()')) as string;
      assert.equal(copied, await p.getByTestId('snippet').textContent(), 'the copy button copies the snippet shown');
      // Another tab's button has copied nothing yet: it must not say "Copied" (it did, for 1.5 s).
      const other = language === 'python' ? 'node' : 'python';
      await panel().getByRole('tab', { name: TAB_NAMES[other] }).click();
      assert.equal(await p.getByTestId(`copy-snippet-${other}`).textContent(), 'Copy');
      await panel().getByRole('tab', { name: TAB_NAMES[language] }).click();
      return copied;
    },

    /** Runs a snippet as an integrator would: saved to a file in an empty folder, with the tool it names. */
    async runSnippet(language: Language, code: string, env: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
      const runner = RUNNERS[language];
      const file = join(work, runner.file);
      writeFileSync(file, code);
      const { SWITCHBOARD_SECRET: _none, ...base } = process.env;
      const out = await run(runner.command, [file], { cwd: work, env: { ...base, ...env }, encoding: 'utf8', timeout: 60_000 });
      const status = Number(/^HTTP(?:\/1\.1)? (\d{3})/m.exec(out.stdout)?.[1]);
      const body = JSON.parse(out.stdout.slice(out.stdout.indexOf('{'))) as Record<string, unknown>;
      return { status, body };
    },
  };
}
