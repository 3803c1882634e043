import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const ROOT = new URL('../', import.meta.url).pathname;

function electronBinary(): { path: string } | { reason: string } {
  try {
    const path = createRequire(import.meta.url)('electron') as unknown;
    if (typeof path === 'string' && existsSync(path)) {
      if (process.platform === 'linux' && !process.env['DISPLAY'] && !process.env['WAYLAND_DISPLAY']) return { reason: 'Electron is installed but there is no display (run under xvfb-run)' };
      return { path };
    }
    return { reason: 'the Electron binary is missing' };
  } catch {
    return { reason: 'the Electron binary is not installed: it could not be downloaded on this machine (npm install had no network for it)' };
  }
}

const electron = electronBinary();

describe('desktop app (Electron)', { skip: 'reason' in electron ? electron.reason : false }, () => {
  it('opens one secure window showing the endpoint, with the service running', async () => {
    const build = spawnSync(process.execPath, ['node_modules/electron-vite/bin/electron-vite.js', 'build', '--logLevel', 'warn'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(build.status, 0, build.stderr);
    const { _electron } = await import('@playwright/test');
    const app = await _electron.launch({
      executablePath: (electron as { path: string }).path,
      args: [ROOT, '--no-sandbox'],
      env: { ...process.env, SWITCHBOARD_DATA_DIR: mkdtempSync(join(tmpdir(), 'sb-electron-')) },
    });
    const window = await app.firstWindow();
    await window.waitForSelector('.endpoint:has-text("/custom-im/chat-messages")');
    const isolated = await window.evaluate(() => typeof (globalThis as { require?: unknown }).require === 'undefined');
    assert.ok(isolated, 'no Node in the renderer');
    assert.equal(app.windows().length, 1);
    await app.close();
  });
});
