import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from '@playwright/test';
import { spawnServe, cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { signBody } from './helpers/sign.ts';
import { ensureConsoleBuilt } from './helpers/build.ts';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
const GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
const DATA_GIF = `data:image/gif;base64,${GIF.toString('base64')}`;

/**
 * The one place this file knows how the console is opened and authenticated: it goes to the URL
 * `serve` printed, as an operator would (today `/?token=…`; with `#token=…` nothing here changes
 * unless the page needs more than that URL).
 */
async function openConsole(browser: Browser, server: ServeProcess): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 760 }, locale: 'en-US' });
  page.setDefaultTimeout(10_000);
  // Every CSP violation, from the first byte on (init scripts are exempt from the page's policy).
  await page.addInitScript(`window.__csp = []; document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.effectiveDirective + ' ' + e.blockedURI));`);
  await page.goto(server.console);
  await page.waitForSelector('[data-conversation]');
  return page;
}

describe('remote media in transcripts (headless console in Chromium)', { skip }, () => {
  let server: ServeProcess;
  let browser: Browser;
  let page: Page;
  let lan: Server;
  let lanRequests = 0;
  let dir: string;
  const remote: string[] = [];
  const secrets: Record<string, string> = {};
  const lanUrl = (): string => `http://127.0.0.1:${(lan.address() as AddressInfo).port}/lan-camera.png`;
  const send = async (client: string, msgId: string, from: string, files: Array<{ content: string; file_type: string; file_name?: string }>) => {
    const r = await fetch(server.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signBody(client, secrets[client]!, { event_type: 'auto_dialog', msg_id: msgId, from_user_id: from, from_user_type: 2, files_info: files }, Math.floor(Date.now() / 1000))),
    });
    assert.equal(r.status, 200, await r.text());
  };
  const srcs = (): Promise<string[]> => page.$$eval('.transcript img', (imgs) => imgs.map((i) => i.getAttribute('src') ?? ''));

  before(async () => {
    ensureConsoleBuilt();
    lan = createServer((_req, res) => {
      lanRequests++;
      res.writeHead(200, { 'content-type': 'image/gif' }).end(GIF);
    });
    await new Promise<void>((resolve) => lan.listen(0, '127.0.0.1', resolve));
    dir = mkdtempSync(join(tmpdir(), 'sb-media-'));
    secrets['acme'] = secretFrom(cli(dir, 'clients', 'add', 'acme', '--send-url', 'http://127.0.0.1:9/hook').stdout);
    const trusted = cli(dir, 'clients', 'add', 'trusted', '--send-url', 'http://127.0.0.1:9/hook', '--media-origins', 'https://cdn.trusted.test');
    assert.equal(trusted.status, 0, trusted.stderr);
    secrets['trusted'] = secretFrom(trusted.stdout);
    server = await spawnServe(dir);
    await send('acme', 'media-http', 'alice', [{ content: lanUrl(), file_type: 'image', file_name: 'camera.png' }]);
    await send('acme', 'media-https', 'bob', [
      { content: 'https://cdn.example.test/photo.gif', file_type: 'image', file_name: 'photo.gif' },
      { content: DATA_GIF, file_type: 'image', file_name: 'inline.gif' },
    ]);
    await send('trusted', 'media-trusted', 'carol', [{ content: 'https://cdn.trusted.test/logo.gif', file_type: 'image', file_name: 'logo.gif' }]);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
    });
    page = await openConsole(browser, server);
    // Stands in for the https servers this machine cannot run: every https request is answered
    // here, and recorded.
    await page.route('https://**/*', (route) => {
      remote.push(route.request().url());
      return route.fulfill({ status: 200, contentType: 'image/gif', body: GIF });
    });
  });
  after(async () => {
    await browser?.close();
    server?.child.kill('SIGTERM');
    await server?.exit();
    lan?.close();
  });

  it('a plain-http attachment is shown as text and never requested', async () => {
    await page.click('[data-conversation]:has-text("alice")');
    const row = await page.waitForSelector('[data-testid=media-plain-http]');
    const text = (await row.textContent()) ?? '';
    assert.match(text, /camera\.png \(image\)/);
    assert.ok(text.includes(lanUrl()), 'the URL is shown as text');
    assert.match(text, /not loaded: plain http/);
    assert.deepEqual(await srcs(), [], 'no element that could load it');
    assert.equal(await page.$(`a[href^="http:"]`), null, 'not even a link');
    assert.equal(lanRequests, 0, 'the LAN server saw nothing');
  });

  it('an https attachment waits for "Load"; data: images show at once', async () => {
    await page.click('[data-conversation]:has-text("bob")');
    const pending = await page.waitForSelector('[data-testid=media-on-click]');
    assert.match((await pending.textContent()) ?? '', /photo\.gif \(image\).*https:\/\/cdn\.example\.test\/photo\.gif/);
    await page.waitForSelector(`.transcript img[src^="data:image/gif"]`);
    assert.deepEqual(await srcs(), [DATA_GIF], 'only the data: image is an <img>');
    assert.deepEqual(remote, [], 'no request before the click');

    await page.click('[data-testid=media-on-click] button:has-text("Load")');
    const img = await page.waitForSelector('.transcript img[src="https://cdn.example.test/photo.gif"]');
    await page.waitForFunction((el) => (el as { complete: boolean; naturalWidth: number }).complete && (el as { naturalWidth: number }).naturalWidth === 1, img);
    assert.deepEqual(remote, ['https://cdn.example.test/photo.gif'], 'one request, after the click');
  });

  it('a client\'s mediaOrigins load without a click', async () => {
    await page.click('[data-conversation]:has-text("carol")');
    await page.waitForSelector('.transcript img[src="https://cdn.trusted.test/logo.gif"]');
    assert.equal(await page.$('[data-testid=media-on-click]'), null);
    assert.ok(remote.includes('https://cdn.trusted.test/logo.gif'));
  });

  it('media origins are set in the client form: https origins only', async () => {
    await page.click('nav >> text=Clients');
    await page.click('[data-client="acme"] button:has-text("Reply settings")');
    const field = '[data-client="acme"] label:has-text("Load media from (https origins)") input';
    await page.fill(field, 'http://cdn.example.test');
    await page.click('[data-client="acme"] button:has-text("Save settings")');
    const alert = await page.waitForSelector('[role=alert]');
    assert.match((await alert.textContent()) ?? '', /mediaOrigins.*https origin/);
    await alert.click();
    await page.fill(field, 'https://cdn.example.test');
    await page.click('[data-client="acme"] button:has-text("Save settings")');
    await page.waitForSelector('[data-client="acme"] button:has-text("Saved")');
    assert.match(cli(dir, 'clients', 'show', 'acme').stdout, /^media-origins\s+https:\/\/cdn\.example\.test$/m);

    await page.click('nav >> text=Conversations');
    await page.click('[data-conversation]:has-text("alice")');
    await page.click('[data-conversation]:has-text("bob")');
    await page.waitForSelector('.transcript img[src="https://cdn.example.test/photo.gif"]');
    assert.equal(await page.$('[data-testid=media-on-click]'), null, 'now without a click');
    assert.equal(lanRequests, 0, 'and plain http is still never requested');
    assert.deepEqual(await page.evaluate('window.__csp'), [], 'the console did nothing its CSP refuses');
  });
});
