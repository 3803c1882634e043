import { test } from 'node:test';
import assert from 'node:assert/strict';
import { consoleWindowOptions, RENDERER_CSP } from './window-options.ts';

test('the console window follows Electron\'s security checklist', () => {
  const web = consoleWindowOptions('/app/out/preload/index.cjs').webPreferences!;
  assert.equal(web.contextIsolation, true);
  assert.equal(web.sandbox, true);
  assert.equal(web.nodeIntegration, false);
  assert.equal(web.nodeIntegrationInWorker, false);
  assert.equal(web.nodeIntegrationInSubFrames, false);
  assert.equal(web.webviewTag, false);
  assert.equal(web.webSecurity, true);
  assert.equal(web.allowRunningInsecureContent, false);
  assert.equal(web.experimentalFeatures, false);
  assert.equal(web.preload, '/app/out/preload/index.cjs');
});

test('the renderer CSP allows our own scripts only', () => {
  const directives: Record<string, string[]> = Object.fromEntries(RENDERER_CSP.split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v]));
  assert.deepEqual(directives['script-src'], ["'self'"]);
  assert.deepEqual(directives['default-src'], ["'self'"]);
  assert.deepEqual(directives['object-src'], ["'none'"]);
  assert.deepEqual(directives['frame-ancestors'], ["'none'"]);
  assert.ok(!RENDERER_CSP.includes('unsafe-eval'));
  assert.ok(!directives['connect-src']!.some((s) => s.startsWith('http')), 'the renderer talks to main over IPC, not the network');
});
