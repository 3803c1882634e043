import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from '@playwright/test';
import { ensureConsoleBuilt } from './build.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
export const SHOTS = join(ROOT, 'test-results', 'screenshots');

/** Builds the renderer as `npm run serve` does; the console listener serves out/renderer. */
export function buildConsole(): void {
  ensureConsoleBuilt();
  mkdirSync(SHOTS, { recursive: true });
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'] });
}

/** Screenshots of the page as it is, in the light and the dark theme. */
export async function shoot(page: Page, name: string): Promise<void> {
  const theme = await js<string>(page, 'document.documentElement.dataset.theme');
  for (const t of ['light', 'dark'] as const) {
    await js(page, `document.documentElement.dataset.theme = ${JSON.stringify(t)}`);
    await page.screenshot({ path: join(SHOTS, `${name}-${t}.png`) });
  }
  await js(page, `document.documentElement.dataset.theme = ${JSON.stringify(theme)}`);
}

/** Evaluates browser-side JavaScript given as text (tests are type-checked without the DOM library). */
export function js<T = unknown>(page: Page, expression: string): Promise<T> {
  return page.evaluate(expression) as Promise<T>;
}

/**
 * Records what the page hands to the Web Notifications API and how often it starts a tone,
 * so a test can see an alert without a desktop to show it on.
 */
export const ALERT_SPY = `
  window.__notes = [];
  window.__tones = 0;
  window.__asked = 0;
  const Real = window.Notification;
  if (Real) {
    const Spy = function (title, options) {
      window.__notes.push({ title, body: options && options.body });
      return new Real(title, options);
    };
    Object.defineProperty(Spy, 'permission', { get: () => Real.permission });
    Spy.requestPermission = (...a) => { window.__asked++; return Real.requestPermission(...a); };
    Spy.prototype = Real.prototype;
    window.Notification = Spy;
  }
  const start = OscillatorNode.prototype.start;
  OscillatorNode.prototype.start = function (...a) { window.__tones++; return start.apply(this, a); };
`;
