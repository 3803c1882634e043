import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from '@playwright/test';
import { extractFile, listPackage } from '@electron/asar';
import { createServer as createViteServer } from 'vite';
import react from '@vitejs/plugin-react';
import { CONSOLE_CSP_DEV_META, CONSOLE_CSP_META } from '../src/shared/csp.ts';
import { consoleCspMeta } from '../electron.vite.config.ts';
import { applyFuses, FUSES, packageApp, readFuses } from '../resources/package-app.ts';

const ROOT = new URL('../', import.meta.url).pathname;
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const noChromium = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
const work = mkdtempSync(join(tmpdir(), 'sb-electron-build-'));
const buildDir = join(work, 'out');

/** The real build, into a folder of this test's own so parallel test files never share out/. */
function build(): void {
  const r = spawnSync(process.execPath, ['node_modules/electron-vite/bin/electron-vite.js', 'build', '--logLevel', 'error', '--outDir', buildDir], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

// From Electron's docs (tutorial/fuses.md): sentinel, one version byte, one length byte, the wire.
const SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';
/** Electron's own defaults, in wire order: RunAsNode on, cookie encryption off, NODE_OPTIONS on... */
const DEFAULT_WIRE = '101100011';

/** A file @electron/fuses accepts as an Electron binary: filler, the fuse sentinel and a wire. */
function fakeElectronBinary(file: string, wire = DEFAULT_WIRE): void {
  writeFileSync(file, Buffer.concat([Buffer.alloc(64 * 1024, 0x7f), Buffer.from(SENTINEL), Buffer.from([1, wire.length]), Buffer.from(wire), Buffer.alloc(1024, 0x7f)]), { mode: 0o755 });
}

const configured = (): Record<string, boolean> =>
  Object.fromEntries(Object.entries(FUSES).flatMap(([k, v]) => (/^\d+$/.test(k) ? [[FUSE_NAMES[Number(k)]!, v as boolean]] : [])));
const FUSE_NAMES = ['RunAsNode', 'EnableCookieEncryption', 'EnableNodeOptionsEnvironmentVariable', 'EnableNodeCliInspectArguments', 'EnableEmbeddedAsarIntegrityValidation', 'OnlyLoadAppFromAsar', 'LoadBrowserProcessSpecificV8Snapshot', 'GrantFileProtocolExtraPrivileges', 'WasmTrapHandlers'];

// Code run inside Chromium, as text: the tests are type-checked without the DOM library.
interface ParsedPage {
  csp: string[];
  cspPosition: number;
  firstScript: number;
  firstInHead: string;
  scripts: Array<{ src: string | null; inline: string; type: string }>;
  styleElements: number;
  styleAttributes: number;
  handlers: string[];
}
const PARSE_IN_PAGE = `(text) => {
  const d = new DOMParser().parseFromString(text, 'text/html');
  const all = [...d.querySelectorAll('*')];
  const csp = [...d.querySelectorAll('meta')].filter((m) => m.httpEquiv.toLowerCase() === 'content-security-policy');
  return {
    csp: csp.map((m) => m.content),
    cspPosition: csp[0] ? all.indexOf(csp[0]) : -1,
    firstScript: all.findIndex((e) => e.tagName === 'SCRIPT'),
    firstInHead: d.head.firstElementChild ? d.head.firstElementChild.outerHTML : '',
    scripts: [...d.scripts].map((s) => ({ src: s.getAttribute('src'), inline: s.textContent || '', type: s.type })),
    styleElements: d.querySelectorAll('style').length,
    styleAttributes: d.querySelectorAll('[style]').length,
    handlers: all.flatMap((e) => [...e.attributes].filter((a) => a.name.startsWith('on')).map((a) => a.name)),
  };
}`;
/** What the Electron preload provides, and a recorder of every CSP violation from the first byte on. */
const PRELOAD_AND_RECORDER = `
  window.__csp = [];
  document.addEventListener('securitypolicyviolation', (e) => window.__csp.push({ directive: e.effectiveDirective, blocked: e.blockedURI }));
  window.switchboard = {
    call: async (method) => method === 'status'
      ? { ok: true, value: { endpoint: 'http://127.0.0.1:8787/custom-im/chat-messages', version: '0.1.0' } }
      : { ok: true, value: [] },
    onEvent: () => () => {},
  };`;
/** What an injected payload would try: an inline script, an inline handler, eval, a plain-http image. */
const ATTACK_IN_PAGE = `async (pixelUrl) => {
  const script = document.createElement('script');
  script.textContent = 'window.__inlineRan = true';
  document.head.append(script);
  const button = document.createElement('button');
  button.setAttribute('onclick', 'window.__handlerRan = true');
  document.body.append(button);
  button.click();
  // Later, from the page's own task queue: DevTools lets code it evaluates itself use eval.
  const evalResult = await new Promise((resolve) => setTimeout(() => {
    try { resolve(String(eval('6 * 7'))); } catch (error) { resolve(error.name); }
  }));
  const img = document.createElement('img');
  const imgResult = await new Promise((resolve) => { img.onload = () => resolve('loaded'); img.onerror = () => resolve('error'); img.src = pixelUrl; document.body.append(img); });
  await new Promise((r) => setTimeout(r, 50));
  return { inlineRan: window.__inlineRan === true, handlerRan: window.__handlerRan === true, evalResult, imgResult, violations: window.__csp };
}`;

before(build);
after(() => rmSync(work, { recursive: true, force: true }));

describe('the built console page (out/renderer/index.html)', { skip: noChromium }, () => {
  let browser: Browser;
  let pixels: Server;
  let pixelRequests = 0;
  const index = (): string => join(buildDir, 'renderer', 'index.html');

  before(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // Electron grants file:// pages access to other file:// URLs (the GrantFileProtocolExtraPrivileges
      // fuse, kept on); a browser needs this flag to let the page load its own module script.
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--allow-file-access-from-files'],
    });
    pixels = createServer((_req, res) => {
      pixelRequests++;
      res.writeHead(200, { 'content-type': 'image/gif' }).end(Buffer.from('R0lGODlhAQABAAAAACw=', 'base64'));
    });
    await new Promise<void>((resolve) => pixels.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await browser?.close();
    pixels?.close();
  });

  it('carries exactly one CSP <meta>, first in <head>, equal to src/shared/csp.ts, and only same-origin scripts', async () => {
    const html = readFileSync(index(), 'utf8');
    const page = await browser.newPage();
    // Chromium's own HTML parser reads the file, as the window will.
    const doc = (await page.evaluate(`(${PARSE_IN_PAGE})(${JSON.stringify(html)})`)) as ParsedPage;
    await page.close();

    assert.deepEqual(doc.csp, [CONSOLE_CSP_META], 'one policy, the one src/shared/csp.ts defines');
    assert.match(doc.firstInHead, /^<meta http-equiv="Content-Security-Policy"/, 'first element of <head>');
    assert.ok(doc.firstScript > doc.cspPosition, 'before any script');
    assert.ok(Buffer.from(html).indexOf('<meta charset') < 1024, 'the charset still comes within the first 1024 bytes');
    assert.ok(doc.scripts.length >= 1);
    for (const s of doc.scripts) {
      assert.equal(s.inline.trim(), '', 'no inline script: script-src is \'self\' only');
      assert.ok(s.src, 'every script has a src');
      const url = new URL(s.src, pathToFileURL(index()));
      assert.equal(url.protocol, 'file:', `${s.src} is same-origin`);
      assert.ok(url.pathname.startsWith(pathToFileURL(join(buildDir, 'renderer')).pathname + '/'), `${s.src} is inside the built renderer`);
      assert.ok(existsSync(url), `${s.src} exists`);
    }
    assert.equal(doc.styleElements, 0, 'no <style>: style-src has no \'unsafe-inline\'');
    assert.equal(doc.styleAttributes, 0);
    assert.deepEqual(doc.handlers, [], 'no inline event handlers');
  });

  it('in Chromium from file:// the policy is in force: the app runs, injected script, eval and http images do not', async () => {
    const context = await browser.newContext();
    // Init scripts are not subject to the page's CSP: they stand in for the preload.
    await context.addInitScript(PRELOAD_AND_RECORDER);
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(pathToFileURL(index()).href);
    // Rendered from what the preload stand-in answered: the app ran (the header shows it from 1360 px up).
    await page.waitForSelector('.endpoint:has-text("/custom-im/chat-messages")', { state: 'attached' });
    assert.deepEqual(await page.evaluate('window.__csp'), [], 'the app itself needs nothing the policy refuses');

    const port = (pixels.address() as AddressInfo).port;
    const outcome = (await page.evaluate(`(${ATTACK_IN_PAGE})(${JSON.stringify(`http://127.0.0.1:${port}/pixel.gif`)})`)) as {
      inlineRan: boolean;
      handlerRan: boolean;
      evalResult: string;
      imgResult: string;
      violations: Array<{ directive: string; blocked: string }>;
    };
    await context.close();

    assert.equal(outcome.inlineRan, false, 'an injected inline script does not run');
    assert.equal(outcome.handlerRan, false, 'an injected inline event handler does not run');
    assert.equal(outcome.evalResult, 'EvalError', 'eval is refused');
    assert.equal(outcome.imgResult, 'error', 'a plain-http image does not load');
    assert.equal(pixelRequests, 0, 'and is never requested');
    const directives = outcome.violations.map((v) => v.directive).sort();
    assert.deepEqual(directives, ['img-src', 'script-src', 'script-src-attr', 'script-src-elem']);
  });
});

describe('the Vite dev server', () => {
  it('writes the dev policy (inline allowed for hot reload, still no eval or http) first in <head>', async () => {
    const server = await createViteServer({
      configFile: false,
      root: join(ROOT, 'src/renderer'),
      plugins: [react(), consoleCspMeta()],
      server: { middlewareMode: true, hmr: false },
      logLevel: 'silent',
    });
    try {
      const html = await server.transformIndexHtml('/index.html', readFileSync(join(ROOT, 'src/renderer/index.html'), 'utf8'));
      const first = /<head>\s*(<[^>]+>)/.exec(html)?.[1] ?? '';
      assert.match(first, /^<meta http-equiv="Content-Security-Policy" content="/);
      assert.equal(/content="([^"]*)"/.exec(first)?.[1]?.replaceAll('&#39;', "'"), CONSOLE_CSP_DEV_META);
      assert.equal(html.match(/http-equiv="Content-Security-Policy"/g)?.length, 1);
    } finally {
      await server.close();
    }
  });
});

describe('packaging (npm run package) and Electron fuses', () => {
  it('flips every fuse as configured on a binary with a fuse wire', async () => {
    const binary = join(work, 'fuse-target');
    fakeElectronBinary(binary);
    assert.equal((await readFuses(binary))['RunAsNode'], true, 'Electron ships with run-as-node on');
    await applyFuses(binary);
    const now = await readFuses(binary);
    assert.deepEqual(now, configured());
    assert.equal(now['RunAsNode'], false);
    assert.equal(now['EnableNodeOptionsEnvironmentVariable'], false);
    assert.equal(now['EnableNodeCliInspectArguments'], false);
    assert.equal(now['EnableEmbeddedAsarIntegrityValidation'], true);
    assert.equal(now['OnlyLoadAppFromAsar'], true);
    assert.equal(now['EnableCookieEncryption'], true);
    assert.equal(now['GrantFileProtocolExtraPrivileges'], true, 'kept: the window loads file://');
  });

  it('refuses a binary whose wire has a fuse nobody decided about yet', async () => {
    const binary = join(work, 'newer-electron');
    fakeElectronBinary(binary, `${DEFAULT_WIRE}1`);
    await assert.rejects(applyFuses(binary), /strictlyRequireAllFuses/);
  });

  it('assembles out/ into resources/app.asar beside a copy of Electron, fused; the source is untouched', async () => {
    const dist = join(work, 'electron-dist');
    mkdirSync(join(dist, 'resources'), { recursive: true });
    fakeElectronBinary(join(dist, 'electron'));
    writeFileSync(join(dist, 'resources', 'default_app.asar'), 'sample app');
    writeFileSync(join(dist, 'LICENSE'), 'MIT');
    const dest = join(work, 'switchboard-linux');
    const executable = await packageApp({ buildDir, electronDist: dist, dest, platform: 'linux' });

    assert.equal(executable, join(dest, 'switchboard'));
    assert.deepEqual(await readFuses(executable), configured());
    assert.equal((await readFuses(join(dist, 'electron')))['RunAsNode'], true, 'node_modules/electron/dist is not modified');
    assert.ok(!existsSync(join(dest, 'resources', 'default_app.asar')), 'no fallback app');
    assert.ok(existsSync(join(dest, 'LICENSE')));
    const asar = join(dest, 'resources', 'app.asar');
    const files = listPackage(asar, { isPack: false }).map((f) => f.replaceAll('\\', '/'));
    for (const f of ['/package.json', '/out/main/index.js', '/out/main/writer-worker.js', '/out/main/engine-worker.js', '/out/main/reader-worker.js', '/out/preload/index.cjs', '/out/renderer/index.html']) assert.ok(files.includes(f), `${f} in app.asar`);
    assert.ok(!files.some((f) => f.startsWith('/node_modules')), 'the main bundle carries its dependencies');
    const manifest = JSON.parse(extractFile(asar, 'package.json').toString()) as { main: string; type: string };
    assert.deepEqual([manifest.main, manifest.type], ['out/main/index.js', 'module']);
    assert.ok(extractFile(asar, 'out/renderer/index.html').toString().includes('http-equiv="Content-Security-Policy"'));
  });

  it('without the Electron binary says so in one line and exits non-zero', () => {
    const empty = mkdtempSync(join(work, 'no-electron-'));
    const r = spawnSync(process.execPath, ['resources/package-app.ts', '--electron-dist', empty], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^switchboard: cannot package: the Electron binary is missing \(.*\); it is downloaded by npm install[^\n]*\n$/);
  });
});
