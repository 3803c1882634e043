import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { listen, signedInAgent } from './helpers/team.ts';
import { buildConsole, CHROMIUM, launchChromium, listRow, ROOT } from './helpers/console-session.ts';

const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

/**
 * A `resync` event (the service's link to the other nodes' events was down, so this console may
 * have missed some): the console loads its list, the open transcript and the team again, as it
 * does when its own event stream comes back. In Chromium against the built console.
 */
describe('a console told to resync loads again what it shows', { skip }, () => {
  let h: Harness;
  let server: Server;
  let browser: Browser;
  let page: Page;

  before(async () => {
    buildConsole();
    h = await startHarness({ clockStart: Date.now() });
    h.addClient('acme', { sendUrl: 'http://127.0.0.1:9/hook' });
    let base: string;
    ({ server, base } = await listen(h.service, join(ROOT, 'out', 'renderer')));
    const token = await signedInAgent(base, h.admin, 'ann', 'Ann', h.clock.now());
    await h.post({ event_type: 'website_dialog', msg_id: mid('rs'), from_user_id: 'vera', nickname: 'Visitor Vera', content: 'Hello?' });
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    await context.addInitScript(`localStorage.setItem('sb.consoleToken', ${JSON.stringify(token)})`);
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${base}/`);
    await listRow(page, 'Visitor Vera').click();
    await page.locator('[data-testid=transcript] .conv-head h2:has-text("Visitor Vera")').waitFor();
  });
  after(async () => {
    await browser?.close();
    await new Promise((r) => server?.close(r));
    await h?.stop();
  });

  it('reloads the list, the open transcript and the team on a resync event', async () => {
    const calls: string[] = [];
    page.on('request', (r) => {
      const m = /\/api\/(listConversations|getTranscript|listTeam)$/.exec(new URL(r.url()).pathname);
      if (m) calls.push(m[1]!);
    });
    const reloaded = Promise.all(['listConversations', 'getTranscript', 'listTeam'].map((m) => page.waitForRequest((r) => new URL(r.url()).pathname === `/api/${m}`)));
    h.service.console.events.deliver({ type: 'resync' });
    await reloaded;
    assert.deepEqual([...new Set(calls)].sort(), ['getTranscript', 'listConversations', 'listTeam']);
  });
});
