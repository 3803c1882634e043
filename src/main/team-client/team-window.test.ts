import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allowsNavigation, isTeamFrame, TEAM_PARTITION, teamPermission, teamWindowOptions } from './team-window.ts';

const ORIGIN = 'https://team.example:8788';

test('the remote console window: hardened as the local one, in-memory session, its own narrow preload', () => {
  const options = teamWindowOptions('/app/out/preload/team.cjs', ORIGIN);
  const web = options.webPreferences!;
  assert.equal(web.nodeIntegration, false);
  assert.equal(web.nodeIntegrationInWorker, false);
  assert.equal(web.nodeIntegrationInSubFrames, false);
  assert.equal(web.contextIsolation, true);
  assert.equal(web.sandbox, true);
  assert.equal(web.webviewTag, false);
  assert.equal(web.webSecurity, true);
  assert.equal(web.allowRunningInsecureContent, false);
  assert.equal(web.preload, '/app/out/preload/team.cjs');
  assert.equal(web.partition, TEAM_PARTITION);
  assert.doesNotMatch(TEAM_PARTITION, /^persist:/, 'nothing of the page\'s storage is written to disk');
  assert.equal(options.title, 'Switchboard — team.example:8788');
  assert.equal(options.show, false);
});

test('it navigates within the connected origin only', () => {
  assert.equal(allowsNavigation('https://team.example:8788/', ORIGIN), true);
  assert.equal(allowsNavigation('https://team.example:8788/#sign-in-link=abc', ORIGIN), true);
  assert.equal(allowsNavigation('https://team.example/', ORIGIN), false, 'another port');
  assert.equal(allowsNavigation('http://team.example:8788/', ORIGIN), false, 'plain http');
  assert.equal(allowsNavigation('https://evil.example/', ORIGIN), false);
  assert.equal(allowsNavigation('file:///etc/passwd', ORIGIN), false);
  assert.equal(allowsNavigation('not a url', ORIGIN), false);
  assert.equal(allowsNavigation('http://127.0.0.1:8788/', 'http://127.0.0.1:8788'), false, 'never a plain-http server');
});

test('IPC and permissions count only from the connected origin', () => {
  assert.equal(isTeamFrame('https://team.example:8788/index.html', ORIGIN), true);
  assert.equal(isTeamFrame('https://evil.example/', ORIGIN), false);
  assert.equal(isTeamFrame(undefined, ORIGIN), false);
  assert.equal(isTeamFrame('https://team.example:8788/', null), false, 'not connected: no remote IPC at all');
  assert.equal(teamPermission('notifications', 'https://team.example:8788/', ORIGIN), true);
  assert.equal(teamPermission('media', 'https://team.example:8788/', ORIGIN), false);
  assert.equal(teamPermission('notifications', 'https://evil.example/', ORIGIN), false);
});
