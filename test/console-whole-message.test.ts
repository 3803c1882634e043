import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from '@playwright/test';
import { spawnServe, cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { signBody } from './helpers/sign.ts';
import { ensureConsoleBuilt } from './helpers/build.ts';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
const AXE = createRequire(import.meta.url).resolve('axe-core');
/** A GIF of 1x1 padded with a comment block to about 12 KB: a data: URL the transcript cuts. */
const GIF = Buffer.concat([
  Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64').subarray(0, 13 + 6),
  Buffer.from([0x21, 0xfe]),
  ...Array.from({ length: 48 }, () => Buffer.concat([Buffer.from([250]), Buffer.alloc(250, 0x61)])),
  Buffer.from([0]),
  Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64').subarray(13 + 6),
]);
const DATA_GIF = `data:image/gif;base64,${GIF.toString('base64')}`;

describe('a transcript line shows its message cut, and the whole on demand (headless console in Chromium)', { skip }, () => {
  let server: ServeProcess;
  let browser: Browser;
  let page: Page;

  before(async () => {
    ensureConsoleBuilt();
    const dir = mkdtempSync(join(tmpdir(), 'sb-whole-'));
    const secret = secretFrom(cli(dir, 'clients', 'add', 'acme', '--send-url', 'http://127.0.0.1:9/hook').stdout);
    server = await spawnServe(dir);
    const info = { event_type: 'auto_dialog', msg_id: 'big-photo', from_user_id: 'dora', from_user_type: 2, order_ref: 'ORD-7781', files_info: [{ content: DATA_GIF, file_type: 'image', file_name: 'receipt.gif' }] };
    const r = await fetch(server.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signBody('acme', secret, info, Math.floor(Date.now() / 1000))) });
    assert.equal(r.status, 200, await r.text());
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 760 }, locale: 'en-US' });
    page.setDefaultTimeout(10_000);
    await page.goto(server.console);
    await page.click('[data-conversation]:has-text("dora")');
  });
  after(async () => {
    await browser?.close();
    server?.child.kill('SIGTERM');
    await server?.exit();
  });

  it('a data: file over the limit is named and said to be cut, not shown broken; "Show the whole message" fetches it and shows it', async () => {
    const cut = await page.waitForSelector('[data-testid=media-cut]');
    assert.match((await cut.textContent()) ?? '', /receipt\.gif \(image\).*too large for the transcript/);
    assert.equal(await page.$('.transcript img'), null, 'no image from a cut URL');
    assert.ok(!(await page.content()).includes('ORD-7781'), 'unknown fields are not in the page before asked for');
    const button = await page.waitForSelector('[data-testid=whole-message]');
    assert.match((await button.textContent()) ?? '', /^Show the whole message \(\d+(\.\d)? kB\)$/);

    await button.click();
    const json = await page.waitForSelector('[data-testid=whole-json] pre');
    assert.match((await json.textContent()) ?? '', /"order_ref": "ORD-7781"/);
    const img = await page.waitForSelector('.transcript img');
    assert.equal(await img.getAttribute('src'), DATA_GIF, 'the whole file, from the whole message');
    assert.equal(await page.$('[data-testid=media-cut]'), null);
  });

  it('the line with the whole message open has no serious accessibility violation', async () => {
    if (!(await page.evaluate("'axe' in window"))) await page.evaluate(readFileSync(AXE, 'utf8'));
    const violations = (await page.evaluate(
      `axe.run(document.querySelector('.transcript'), { resultTypes: ['violations'] }).then((r) => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id + ' ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`,
    )) as string[];
    assert.deepEqual(violations, []);
  });
});
