import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { spawnServe, cli, secretFrom, type ServeProcess } from './helpers/processes.ts';
import { makeCertificate, opensslMissing, type TestCertificate } from './helpers/tls-cert.ts';
import { buildConsole, CHROMIUM, chooseLanguage, listRow, sendAs, SHOTS, useTheme, waitFor } from './helpers/console-session.ts';
import { seriousViolations } from './helpers/integrate-panel.ts';
import { openDatabase } from '../src/main/store/db.ts';
import { createStore } from '../src/main/store/index.ts';
import { databasePath } from '../src/main/store/data-dir.ts';
import { digestOf, newSecret } from '../src/main/accounts/sessions.ts';
import { createTeamClient, type TeamClient } from '../src/main/team-client/team-client.ts';
import { createPinStore } from '../src/main/team-client/pin-store.ts';
import { SESSION_FILE, type SessionKeychain } from '../src/main/team-client/session-store.ts';
import { fakeKeychain } from '../src/main/team-client/keychain.fixture.ts';

const skip = !existsSync(CHROMIUM) ? `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)` : (opensslMissing() ?? false);
const PASSWORD = 'correct horse battery staple';

/** Electron's safeStorage as the desktop has it: real encryption under a key the keychain holds. */
const keychain = (available = true): SessionKeychain => fakeKeychain({ available });

/**
 * The local desktop window, in Chromium: the preload's bridge stood in for by an init script.
 * Console calls go to the served API with the owner's token; the Team server calls go to the real
 * main-process logic (team-client.ts) in this process, as IPC would take them.
 */
async function localWindow(browser: Browser, server: ServeProcess, client: TeamClient): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  await page.exposeFunction('__teamProbe', (url: string) => client.probe(url));
  await page.exposeFunction('__teamConnect', (url: string, fingerprint: string | null) => client.connect(url, fingerprint).then((r) => (r.ok ? { ok: true, value: { origin: r.value.origin } } : r)));
  await page.exposeFunction('__teamForget', (url: string) => client.forget(url));
  await page.addInitScript(`
    const token = ${JSON.stringify(server.consoleToken)};
    window.switchboard = {
      call: (method, input) => fetch('/api/' + method, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + token }, body: JSON.stringify(input ?? {}) }).then((r) => r.json()),
      onEvent: () => () => {},
      team: {
        probe: (url) => window.__teamProbe(url),
        connect: (url, fingerprint) => window.__teamConnect(url, fingerprint),
        forget: (url) => window.__teamForget(url),
        onOpenDialog: (listener) => { window.__openTeamDialog = listener; return () => {}; },
      },
    };
  `);
  await page.goto(server.consoleBase);
  return page;
}

/**
 * The desktop's window on the team server, in Chromium: a fresh context is a fresh in-memory
 * partition; the preload's bridge is stood in for with the real session store behind it.
 */
async function remoteWindow(browser: Browser, server: ServeProcess, client: TeamClient, calls: string[]): Promise<{ context: BrowserContext; page: Page }> {
  const origin = new URL(server.consoleBase).origin;
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  await page.exposeFunction('__teamSave', (token: string) => client.saveSession(origin, token));
  await page.exposeFunction('__teamClear', () => {
    calls.push('clear');
    client.clearSession();
  });
  await page.exposeFunction('__teamLocal', () => void calls.push('useThisComputer'));
  // As the preload reads it: synchronously, before the page's first script.
  const kept = client.loadSession(origin);
  await page.addInitScript(`
    window.switchboardTeam = {
      keptSession: () => ${JSON.stringify(kept)},
      saveSession: (token) => window.__teamSave(token),
      clearSession: () => window.__teamClear(),
      useThisComputer: () => window.__teamLocal(),
    };
  `);
  await page.goto(server.consoleBase);
  return { context, page };
}

/** A POST to the served API from inside the page (same origin, so the Origin check applies). */
function pagePost<T>(page: Page, path: string, body: unknown, token: string | null = null): Promise<{ status: number; body: T }> {
  return page.evaluate(`fetch(${JSON.stringify(path)}, { method: 'POST', headers: Object.assign({ 'content-type': 'application/json' }, ${JSON.stringify(token)} ? { authorization: 'Bearer ' + ${JSON.stringify(token)} } : {}), body: ${JSON.stringify(JSON.stringify(body))} }).then(async (r) => ({ status: r.status, body: await r.json() }))`) as Promise<{ status: number; body: T }>;
}

describe('desktop: connect to a team server, sign in, keep the session (Chromium against a TLS serve)', { skip }, () => {
  let cert: TestCertificate;
  let server: ServeProcess;
  let browser: Browser;
  let dataDir: string;
  let secret: string;
  const desktopDir = mkdtempSync(join(tmpdir(), 'sb-desktop-'));
  const client = createTeamClient({ dataDir: desktopDir, keychain: keychain() });
  const audit: string[] = [];
  const axe = async (page: Page, name: string): Promise<void> => {
    for (const line of await seriousViolations(page)) audit.push(`${name}: ${line}`);
    await page.screenshot({ path: join(SHOTS, `team-server-${name}.png`) });
  };

  before(async () => {
    buildConsole();
    cert = makeCertificate(['DNS:localhost', 'IP:127.0.0.1']);
    dataDir = mkdtempSync(join(tmpdir(), 'sb-team-flow-'));
    secret = secretFrom(cli(dataDir, 'clients', 'add', 'acme').stdout);
    server = await spawnServe(dataDir, ['--console-host', '0.0.0.0', '--tls-cert', cert.certFile, '--tls-key', cert.keyFile]);
    // Chromium trusts exactly this certificate's key, as the desktop trusts a confirmed fingerprint.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', `--ignore-certificate-errors-spki-list=${cert.spki}`] });
  });
  after(async () => {
    await browser?.close();
    if (server) {
      server.child.kill('SIGTERM');
      await server.exit();
    }
  });

  it('the local window\'s Team server dialog: URL → the real fingerprint → confirm → connect (pinned)', async () => {
    const page = await localWindow(browser, server, client);
    await page.click('[data-testid=team-server-open]');
    const dialog = page.locator('[data-testid=team-server-dialog]');
    await dialog.waitFor();
    await axe(page, 'dialog-empty');
    await dialog.getByLabel('Team server address').fill(server.consoleBase);
    await dialog.getByRole('button', { name: 'Check' }).click();
    const facts = dialog.locator('[data-testid=team-server-certificate]');
    await facts.waitFor();
    assert.equal(await facts.getAttribute('data-trust'), 'unverified');
    assert.equal(await dialog.locator('[data-testid=team-server-fingerprint]').textContent(), cert.fingerprint, 'the fingerprint openssl gave the administrator');
    const connect = dialog.locator('[data-testid=team-server-connect]');
    assert.equal(await connect.isDisabled(), true, 'not before the fingerprint is confirmed');
    for (const theme of ['light', 'dark'] as const) {
      await useTheme(page, theme);
      await axe(page, `dialog-self-signed-${theme}`);
    }
    await dialog.getByLabel('The fingerprint matches the one I was given').check();
    await connect.click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal(createPinStore(desktopDir).get('localhost'), cert.fingerprint, 'pinned once confirmed');
    assert.equal(client.activeServer(), new URL(server.consoleBase).origin);
    await page.context().close();
  });

  it('a changed certificate is refused in the dialog with both fingerprints, until forgotten on purpose; Chinese too', async () => {
    const other = makeCertificate();
    createPinStore(desktopDir).pin('localhost', other.fingerprint);
    const page = await localWindow(browser, server, client);
    await chooseLanguage(page, 'zh-CN');
    await page.click('[data-testid=team-server-open]');
    const dialog = page.locator('[data-testid=team-server-dialog]');
    await dialog.getByLabel('团队服务器地址').fill(server.consoleBase);
    await dialog.getByRole('button', { name: '检查' }).click();
    const facts = dialog.locator('[data-testid=team-server-certificate][data-trust=changed]');
    await facts.waitFor();
    const text = (await facts.textContent()) ?? '';
    assert.ok(text.includes(other.fingerprint) && text.includes(cert.fingerprint), text);
    assert.equal(await dialog.locator('[data-testid=team-server-connect]').count(), 0, 'no way to connect');
    for (const theme of ['light', 'dark'] as const) {
      await useTheme(page, theme);
      await axe(page, `dialog-changed-zh-${theme}`);
    }
    await dialog.getByRole('button', { name: '忘记旧证书' }).click();
    await dialog.locator('[data-testid=team-server-certificate][data-trust=unverified]').waitFor();
    // The menu (or a window that failed to load) opens the dialog with why.
    await page.keyboard.press('Escape');
    await page.evaluate(`window.__openTeamDialog('cannot open https://localhost: refused')`);
    await page.locator('[data-testid=team-server-notice]').waitFor();
    await axe(page, 'dialog-notice-zh');
    await page.context().close();
    createPinStore(desktopDir).pin('localhost', cert.fingerprint);
  });

  it('the window on the team server: sign-in over TLS, the session kept encrypted, used after a restart, forgotten at sign-out', async () => {
    const db = createStore(openDatabase(databasePath(dataDir)));
    const link = newSecret();
    const now = Date.now();
    db.accounts.add({ id: 'ann', name: 'Ann Lee', role: 'agent', now });
    db.accounts.replaceSignInLink('ann', digestOf(link), now + 3_600_000, now);
    db.close();
    const calls: string[] = [];
    const origin = new URL(server.consoleBase).origin;

    const first = await remoteWindow(browser, server, client, calls);
    await first.page.locator('[data-testid=auth-problem]').waitFor();
    assert.equal(await first.page.locator('[data-testid=team-server-open]').count(), 0, 'the Connect dialog belongs to the local window only');
    await first.page.locator('[data-testid=team-use-this-computer]').waitFor();
    // The sign-in page is another part of team mode: its API is what it calls.
    const signedIn = await pagePost<{ ok: boolean; value: { token: string; account: { id: string; role: string } } }>(first.page, '/api/auth/usePasswordLink', { link, password: PASSWORD });
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.deepEqual(signedIn.body.value.account, { id: 'ann', name: 'Ann Lee', role: 'agent' });
    await first.page.evaluate(`localStorage.setItem('sb.consoleToken', ${JSON.stringify(signedIn.body.value.token)}); location.reload()`);
    // The event stream over TLS: a message sent now shows up in Ann's list.
    await first.page.locator('header.top').waitFor();
    const sent = await sendAs(server, 'acme', secret, { event_type: 'website_dialog', msg_id: 'team-flow-1', from_user_id: 'visitor-tls', content: 'Hello from the team flow' });
    assert.equal(sent.status, 200);
    await listRow(first.page, 'visitor-tls').waitFor();
    const kept = await waitFor('the session kept', async () => client.loadSession(origin));
    assert.equal(kept, signedIn.body.value.token, 'kept for the next run');
    assert.ok(!readFileSync(join(desktopDir, SESSION_FILE), 'utf8').includes(kept), 'encrypted on disk');
    for (const theme of ['light', 'dark'] as const) {
      await useTheme(first.page, theme);
      await axe(first.page, `remote-${theme}`);
    }
    await first.page.click('[data-testid=team-use-this-computer]');
    await waitFor('switch back asked', async () => calls.includes('useThisComputer'));
    await first.context.close();

    // A restart: a new in-memory partition, nothing in the page's storage; the kept session signs Ann in.
    const second = await remoteWindow(browser, server, client, calls);
    await listRow(second.page, 'visitor-tls').waitFor();
    assert.equal(await second.page.locator('[data-testid=auth-problem]').count(), 0);
    const who = await pagePost<{ value: { account: { id: string } } }>(second.page, '/api/whoAmI', {}, kept);
    assert.equal(who.body.value.account.id, 'ann');
    // Signing in with the password works the same way.
    const again = await pagePost<{ ok: boolean }>(second.page, '/api/auth/signIn', { id: 'ann', password: PASSWORD });
    assert.equal(again.body.ok, true);
    // Sign-out ends the session: the page's next call is refused and the kept copy is forgotten.
    assert.equal((await pagePost(second.page, '/api/signOut', {}, kept)).status, 200);
    await second.page.reload();
    await second.page.locator('[data-testid=auth-problem]').waitFor();
    await waitFor('the kept session forgotten', async () => calls.includes('clear'));
    assert.equal(client.loadSession(origin), null);
    await second.context.close();
  });

  it('without encrypted storage the window says the session is not remembered', async () => {
    const plain = createTeamClient({ dataDir: mkdtempSync(join(tmpdir(), 'sb-desktop-plain-')), keychain: keychain(false) });
    const { context, page } = await remoteWindow(browser, server, plain, []);
    await page.evaluate(`localStorage.setItem('sb.consoleToken', ${JSON.stringify(server.consoleToken)}); location.reload()`);
    await page.locator('[data-testid=team-not-remembered]').waitFor();
    await axe(page, 'remote-not-remembered');
    await context.close();
    assert.deepEqual(audit, [], `serious or critical axe violations:\n${audit.join('\n')}`);
  });
});
