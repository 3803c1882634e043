import { test } from 'node:test';
import assert from 'node:assert/strict';
import { consoleWindowOptions } from './window-options.ts';

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
