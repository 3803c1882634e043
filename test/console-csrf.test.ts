import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext } from '@playwright/test';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { createConsoleServer } from '../src/main/console-api/console-server.ts';
import { consoleTokenAtStart } from '../src/main/console-api/console-token.ts';
import { secretKeyPath } from '../src/main/store/data-dir.ts';

const ROOT = new URL('../', import.meta.url).pathname;
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  status?: number;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const TABLES = ['clients', 'client_secrets', 'kb_entries', 'settings', 'conversations', 'engines', 'deliveries'];

/** Every table an attacker would want to change, as rows: equal before and after means untouched. */
function snapshot(h: Harness): Record<string, string> {
  return Object.fromEntries(TABLES.map((t) => [t, JSON.stringify(h.admin.connection.prepare(`SELECT * FROM ${t} ORDER BY rowid`).all())]));
}

const changedTables = (a: Record<string, string>, b: Record<string, string>): string[] => TABLES.filter((t) => a[t] !== b[t]);

/**
 * The page an attacker serves from another port of 127.0.0.1: the same site as the console,
 * another origin. It tries every request a page can make without reading the token.
 */
function attackPage(consoleOrigin: string, attackerOrigin: string, probeOrigin: string, conversationId: string): string {
  const calls: Array<[string, unknown]> = [
    ['stopAutoReply', { conversationId }],
    ['addClient', { id: 'evil-client', settings: { sendUrl: 'http://127.0.0.1:9/evil' } }],
    ['saveKb', { question: 'What is the admin password?', answer: 'pwned' }],
    ['importKb', { fileName: 'evil.json', text: JSON.stringify([{ question: 'evil?', answer: 'pwned' }]) }],
    ['updateClientSettings', { id: 'acme', settings: { sendUrl: 'http://127.0.0.1:9/evil' } }],
    ['setClientEnabled', { id: 'acme', enabled: false }],
    ['rotateClient', { id: 'acme', retirePrevious: true }],
  ];
  const script = `
const C = ${JSON.stringify(consoleOrigin)};
const calls = ${JSON.stringify(calls)};
const log = [];
const tryIt = async (name, fn) => { try { await fn(); log.push(name + ': sent'); } catch (e) { log.push(name + ': ' + e.message); } };
const framed = (build) => new Promise((resolve) => {
  const name = 'sink' + Math.random().toString(36).slice(2);
  const frame = document.createElement('iframe');
  frame.name = name;
  document.body.append(frame);
  const form = build();
  form.target = name;
  document.body.append(form);
  const done = () => resolve();
  frame.addEventListener('load', () => setTimeout(done, 50));
  setTimeout(done, 3000);
  form.submit();
});
const form = (action, enctype, fields) => () => {
  const f = document.createElement('form');
  f.method = 'POST';
  f.action = action;
  f.enctype = enctype;
  for (const [k, v] of fields) { const i = document.createElement('input'); i.name = k; i.value = v; f.append(i); }
  return f;
};
const load = (tag, attr, url) => new Promise((resolve) => {
  const el = document.createElement(tag);
  if (tag === 'link') el.rel = 'stylesheet';
  el.onload = el.onerror = () => resolve();
  el[attr] = url;
  document.body.append(el);
  setTimeout(resolve, 3000);
});
(async () => {
  for (const [m, input] of calls) {
    const url = C + '/api/' + m;
    const json = JSON.stringify(input);
    const fd = new FormData();
    for (const [k, v] of Object.entries(input)) fd.append(k, typeof v === 'string' ? v : JSON.stringify(v));
    await tryIt(m + ' no-cors text/plain', () => fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: json }));
    await tryIt(m + ' no-cors urlencoded', () => fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: json }));
    await tryIt(m + ' no-cors multipart', () => fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include', body: fd }));
    await tryIt(m + ' no-cors json blob', () => fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include', body: new Blob([json], { type: 'application/json' }) }));
    await tryIt(m + ' cors json', () => fetch(url, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: json }));
    await tryIt(m + ' beacon', async () => { if (!navigator.sendBeacon(url, new Blob([json], { type: 'text/plain' }))) throw new Error('beacon refused'); });
    // The classic JSON-through-a-form trick: name and value join into a JSON document.
    const cut = json.length - 1;
    await tryIt(m + ' form text/plain', () => framed(form(url, 'text/plain', [[json.slice(0, cut) + ',"pad":"', '"}']])));
    await tryIt(m + ' form urlencoded', () => framed(form(url, 'application/x-www-form-urlencoded', Object.entries(input).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]))));
    await tryIt(m + ' form multipart', () => framed(form(url, 'multipart/form-data', [['json', json]])));
  }
  await tryIt('img events', () => load('img', 'src', C + '/api/events'));
  await tryIt('script events', () => load('script', 'src', C + '/api/events'));
  await tryIt('stylesheet events', () => load('link', 'href', C + '/api/events'));
  await tryIt('img probe', () => load('img', 'src', ${JSON.stringify(probeOrigin)} + '/pixel.png'));
  await tryIt('frame console', () => load('iframe', 'src', C + '/'));
  await tryIt('read the page', () => fetch(C + '/', { credentials: 'include' }).then((r) => r.text()));
  await fetch(${JSON.stringify(attackerOrigin)} + '/done', { method: 'POST', body: JSON.stringify(log) });
  // Last: navigate this tab to the API itself.
  location.href = C + '/api/stopAutoReply?conversationId=' + encodeURIComponent(${JSON.stringify(conversationId)});
})();
`;
  return `<!doctype html><html><head><title>cute cats</title></head><body><h1>cute cats</h1><script>${script}</script></body></html>`;
}

describe('console CSRF and token leaks, attacked from another 127.0.0.1 port in Chromium (section 9)', { skip }, () => {
  let h: Harness;
  let consoleServer: Server;
  let attacker: Server;
  let probe: Server;
  let browser: Browser;
  let context: BrowserContext;
  let consoleUrl: string;
  let consoleOrigin: string;
  let token: string;
  let conversationId: string;
  const atConsole: Seen[] = [];
  const atAttacker: Seen[] = [];
  const atProbe: Seen[] = [];
  let attackLog: string[] = [];
  let attackDone: () => void;
  const attackFinished = new Promise<void>((r) => (attackDone = r));

  before(async () => {
    const out = mkdtempSync(join(tmpdir(), 'sb-csrf-build-'));
    const build = spawnSync(process.execPath, ['node_modules/electron-vite/bin/electron-vite.js', 'build', '--logLevel', 'error', '--outDir', out], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(build.status, 0, build.stderr);

    h = await startHarness();
    h.addClient('acme', { sendUrl: 'http://127.0.0.1:9/hook' });
    // Stop is an operator action (recorded under the operator's name): the console's own stop below needs one.
    h.admin.accounts.setOwner({ id: 'op', name: 'Operator', now: h.clock.now() });
    h.admin.kb.add('Where is my parcel?', 'Track it with the link in your confirmation email.', h.clock.now());
    const m = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'alice', from_user_type: 2, content: 'Where is my parcel?' });
    conversationId = String(m.body['conversation_id']);

    // Wired as `serve` wires it: derived token, hash-only check, the URL printed with a fragment.
    token = consoleTokenAtStart(h.service.store.settings, secretKeyPath(h.dataDir)).token;
    consoleServer = createConsoleServer({
      rendererDir: join(out, 'renderer'),
      accounts: h.service.console.accounts,
      handlers: h.service.console.handlers,
      events: h.service.console.events,
    });
    consoleServer.prependListener('request', (req, res) => {
      const seen: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers };
      atConsole.push(seen);
      res.on('finish', () => (seen.status = res.statusCode));
    });
    consoleOrigin = await listen(consoleServer);
    consoleUrl = `${consoleOrigin}/#token=${token}`;

    probe = createServer((req, res) => {
      atProbe.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>another local server</title>');
    });
    const probeOrigin = await listen(probe);
    attacker = createServer((req, res) => {
      atAttacker.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      if (req.url === '/done') {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          attackLog = JSON.parse(body) as string[];
          res.writeHead(204).end();
          attackDone();
        });
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' }).end(attackPage(consoleOrigin, attackerOrigin, probeOrigin, conversationId));
    });
    const attackerOrigin = await listen(attacker);

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
    });
    context = await browser.newContext({ locale: 'en-US' });
    context.setDefaultTimeout(15_000);
  });
  after(async () => {
    await browser?.close();
    consoleServer?.closeAllConnections();
    consoleServer?.close();
    attacker?.closeAllConnections();
    attacker?.close();
    probe?.close();
    await h?.stop();
  });

  it('an attacker page on another port changes nothing and never sees the token', async () => {
    // The operator opens the printed URL: the console works, with its token.
    const operator = await context.newPage();
    await operator.goto(consoleUrl);
    await operator.waitForSelector('[data-conversation]:has-text("alice")');
    assert.equal(operator.url(), `${consoleOrigin}/`, 'the token left the address bar');

    const beforeAttack = snapshot(h);
    const fromConsolePage = atConsole.length;

    // Then visits a page on another local port, and another local server.
    const evil = await context.newPage();
    await evil.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`);
    await attackFinished;
    await evil.waitForURL(/\/api\/stopAutoReply/);
    const other = await context.newPage();
    await other.goto(`http://127.0.0.1:${(probe.address() as AddressInfo).port}/visited`);

    assert.ok(attackLog.length >= 60, `the attack ran: ${attackLog.length} attempts`);
    assert.deepEqual(changedTables(beforeAttack, snapshot(h)), [], 'clients, secrets, knowledge base, settings and conversations are unchanged');
    assert.equal(h.admin.clients.get('evil-client'), undefined);

    // The attacker's requests reached the console and were all refused.
    const fromAttacker = atConsole.slice(fromConsolePage).filter((s) => s.headers['sec-fetch-site'] !== 'same-origin');
    assert.ok(fromAttacker.filter((s) => s.url.startsWith('/api/')).length >= 40, `attacker requests reached the console: ${fromAttacker.length}`);
    for (const s of fromAttacker.filter((x) => x.url.startsWith('/api/'))) {
      assert.ok(s.status === undefined || s.status >= 400, `${s.method} ${s.url} from ${s.headers.origin ?? s.headers.referer} was answered ${s.status}`);
    }

    // No request from the browser carried the token anywhere but the console's own API calls.
    const carries = (s: Seen): boolean => JSON.stringify(s).includes(token);
    for (const s of [...atAttacker, ...atProbe, ...fromAttacker]) assert.equal(carries(s), false, `${s.method} ${s.url} carried the token`);
    for (const s of [...atAttacker, ...atProbe, ...atConsole]) {
      assert.equal(s.headers.cookie, undefined, `${s.method} ${s.url} carried a cookie`);
    }
    for (const s of [...atAttacker, ...atProbe]) assert.equal(s.headers.authorization, undefined);
    assert.ok(atProbe.some((s) => s.url === '/visited') && atProbe.some((s) => s.url === '/pixel.png'), 'the other local server was visited');
    assert.deepEqual(await context.cookies(), [], 'the console set no cookie');
    assert.ok(
      atConsole.every((s) => !s.url.includes(token)),
      'the token never travelled in a URL',
    );
  });

  it('the same snapshot sees a change the console itself makes (the check above can fail)', async () => {
    const beforeStop = snapshot(h);
    const operator = context.pages()[0]!;
    await operator.click('[data-conversation]:has-text("alice")');
    // Shortcuts act on the conversation shown: wait for its header (a loaded machine is slower to open it).
    await operator.waitForSelector('.conv-head:has-text("alice") [data-testid=auto-reply-state]');
    await operator.keyboard.press('s');
    await operator.waitForSelector('[data-testid=auto-reply-state]:has-text("Stopped")');
    assert.deepEqual(changedTables(beforeStop, snapshot(h)), ['conversations']);
  });
  it('a link to the console with a wrong #token= does not sign the operator out: the token that worked comes back', async () => {
    const page = await context.newPage();
    await page.goto(consoleUrl);
    await page.waitForSelector('[data-conversation]:has-text("alice")');
    // What any page on another local port can do: send the browser to the console with a token of its choosing.
    await page.goto(`${consoleOrigin}/#token=not-the-console-token`);
    await page.waitForSelector('[data-conversation]:has-text("alice")');
    assert.equal(await page.evaluate('localStorage.getItem("sb.consoleToken")'), token, 'the working token is stored again');
    assert.equal(await page.locator('text=console token').count(), 0, 'no sign-in screen');
    await page.close();
  });
});
