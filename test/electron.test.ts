import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureConsoleBuilt } from './helpers/build.ts';

const ROOT = new URL('../', import.meta.url).pathname;

function electronBinary(): { path: string } | { reason: string } {
  // Not require('electron'): in Electron 45 that starts a download when the binary is missing.
  const pathFile = join(ROOT, 'node_modules', 'electron', 'path.txt');
  if (!existsSync(pathFile)) return { reason: 'the Electron binary is not installed: it could not be downloaded on this machine (npm install had no network for it)' };
  const path = join(ROOT, 'node_modules', 'electron', 'dist', readFileSync(pathFile, 'utf8').trim());
  if (!existsSync(path)) return { reason: 'the Electron binary is missing' };
  if (process.platform === 'linux' && !process.env['DISPLAY'] && !process.env['WAYLAND_DISPLAY']) return { reason: 'Electron is installed but there is no display (run under xvfb-run)' };
  return { path };
}

const electron = electronBinary();

describe('desktop app (Electron)', { skip: 'reason' in electron ? electron.reason : false }, () => {
  it('opens one secure window showing the endpoint, with the service running', async () => {
    ensureConsoleBuilt();
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
    // The window's CSP is the <meta> of the built page (file:// has no headers): an injected
    // inline script does not run.
    const inlineRan = await window.evaluate(`(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__inlineRan = true';
      document.head.append(s);
      return window.__inlineRan === true;
    })()`);
    assert.equal(inlineRan, false, 'the CSP is in force in the Electron window');
    assert.equal(app.windows().length, 1);
    await app.close();
  });
});
