import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ElectronApplication, Page } from '@playwright/test';
import { ensureConsoleBuilt } from './helpers/build.ts';
import { spawnServe, type ServeProcess } from './helpers/processes.ts';
import { makeCertificate, opensslMissing, type TestCertificate } from './helpers/tls-cert.ts';

const ROOT = new URL('../', import.meta.url).pathname;

/** The Electron binary, or why these tests cannot run (as test/electron.test.ts decides it). */
function electronBinary(): { path: string } | { reason: string } {
  const pathFile = join(ROOT, 'node_modules', 'electron', 'path.txt');
  if (!existsSync(pathFile)) return { reason: 'the Electron binary is not installed: it could not be downloaded on this machine (npm install had no network for it); the logic behind these windows is tested in Node (src/main/team-client/*.test.ts) and in Chromium (test/team-server-desktop-flow.test.ts)' };
  const path = join(ROOT, 'node_modules', 'electron', 'dist', readFileSync(pathFile, 'utf8').trim());
  if (!existsSync(path)) return { reason: 'the Electron binary is missing' };
  if (process.platform === 'linux' && !process.env['DISPLAY'] && !process.env['WAYLAND_DISPLAY']) return { reason: 'Electron is installed but there is no display (run under xvfb-run)' };
  return { path };
}

describe('desktop build: the preloads', () => {
  it('each preload is one self-contained file: a sandboxed preload can require electron and nothing else', () => {
    ensureConsoleBuilt();
    const dir = join(ROOT, 'out', 'preload');
    const files = readdirSync(dir);
    assert.deepEqual(files.filter((f) => f.endsWith('.cjs')).sort(), ['index.cjs', 'team.cjs']);
    assert.deepEqual(files.filter((f) => !f.endsWith('.cjs')), [], 'no shared chunk folder');
    for (const f of ['index.cjs', 'team.cjs']) {
      const required = [...readFileSync(join(dir, f), 'utf8').matchAll(/require\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]);
      assert.deepEqual([...new Set(required)], ['electron'], f);
    }
    // The remote window's bridge names its four functions and no console call.
    const team = readFileSync(join(dir, 'team.cjs'), 'utf8');
    assert.match(team, /exposeInMainWorld\(\s*["']switchboardTeam["']/);
    assert.doesNotMatch(team, /switchboard:call|switchboard:team:probe|switchboard:team:connect/);
  });
});

const electron = electronBinary();
const skip = 'reason' in electron ? electron.reason : (opensslMissing() ?? false);

describe('desktop app on a team server (Electron)', { skip }, () => {
  let cert: TestCertificate;
  let server: ServeProcess;
  before(async () => {
    ensureConsoleBuilt();
    cert = makeCertificate(['DNS:localhost', 'IP:127.0.0.1']);
    server = await spawnServe(mkdtempSync(join(tmpdir(), 'sb-team-electron-srv-')), ['--console-host', '127.0.0.1', '--tls-cert', cert.certFile, '--tls-key', cert.keyFile]);
  });
  after(async () => {
    server.child.kill('SIGTERM');
    await server.exit();
  });

  /** The app with a data folder that remembers the team server and the certificate confirmed for it. */
  async function launch(pinned: string): Promise<ElectronApplication> {
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-team-electron-'));
    const origin = new URL(server.consoleBase).origin;
    writeFileSync(join(dataDir, 'team-server.json'), JSON.stringify({ origin, active: true }));
    writeFileSync(join(dataDir, 'team-pins.json'), JSON.stringify({ pins: { localhost: pinned } }));
    const { _electron } = await import('@playwright/test');
    return _electron.launch({ executablePath: (electron as { path: string }).path, args: [ROOT, '--no-sandbox'], env: { ...process.env, SWITCHBOARD_DATA_DIR: dataDir } });
  }

  async function windowAt(app: ElectronApplication, prefix: string): Promise<Page> {
    for (;;) {
      const found = app.windows().find((w) => w.url().startsWith(prefix));
      if (found) return found;
      await app.waitForEvent('window', { timeout: 30_000 });
    }
  }

  it('opens the remembered server in its own locked-down window, with the narrow bridge only', async () => {
    const app = await launch(cert.fingerprint);
    try {
      const remote = await windowAt(app, server.consoleBase);
      await remote.waitForSelector('[data-testid=auth-problem]');
      const shape = await remote.evaluate(`({ node: typeof require, ipc: typeof window.switchboard, team: Object.keys(window.switchboardTeam ?? {}).sort() })`);
      assert.deepEqual(shape, { node: 'undefined', ipc: 'undefined', team: ['clearSession', 'keptSession', 'saveSession', 'useThisComputer'] });
      await remote.click('[data-testid=team-use-this-computer]');
      const local = await windowAt(app, 'file://');
      await local.waitForSelector('[data-testid=team-server-open]');
    } finally {
      await app.close();
    }
  });

  it('a changed certificate never loads: the local window comes back with the dialog saying why', async () => {
    const app = await launch(makeCertificate().fingerprint);
    try {
      const local = await windowAt(app, 'file://');
      const notice = local.locator('[data-testid=team-server-notice]');
      await notice.waitFor({ timeout: 30_000 });
      assert.match((await notice.textContent()) ?? '', /certificate of localhost changed/);
    } finally {
      await app.close();
    }
  });
});
