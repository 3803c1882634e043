import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MenuItemConstructorOptions } from 'electron';
import { appMenuTemplate } from './team-menu.ts';

const items = (template: MenuItemConstructorOptions[]): MenuItemConstructorOptions[] => (template.find((m) => m.label === 'Team')!.submenu as MenuItemConstructorOptions[]).filter((i) => i.id);

test('the Team menu: connect always; sign out and the way back only while a team server is shown', () => {
  const calls: string[] = [];
  const actions = { connect: () => calls.push('connect'), signOut: () => calls.push('signOut'), useThisComputer: () => calls.push('local') };
  const local = items(appMenuTemplate(null, actions, 'linux'));
  assert.deepEqual(local.map((i) => [i.label, i.enabled ?? true]), [['Connect to a team server…', true], ['Sign out', false], ['Use this computer\'s own service', false]]);
  const remote = items(appMenuTemplate('https://team.example:8788', actions, 'linux'));
  assert.deepEqual(remote.map((i) => [i.label, i.enabled ?? true]), [['Connect to a team server…', true], ['Sign out of team.example:8788', true], ['Use this computer\'s own service', true]]);
  for (const i of remote) (i.click as () => void)();
  assert.deepEqual(calls, ['connect', 'signOut', 'local']);
});

test('the standard menus stay, so copy, paste and their shortcuts keep working', () => {
  const roles = (p: NodeJS.Platform) => appMenuTemplate(null, { connect() {}, signOut() {}, useThisComputer() {} }, p).map((m) => m.role ?? m.label);
  assert.deepEqual(roles('linux'), ['fileMenu', 'editMenu', 'Team', 'viewMenu', 'windowMenu']);
  assert.deepEqual(roles('darwin'), ['appMenu', 'fileMenu', 'editMenu', 'Team', 'viewMenu', 'windowMenu']);
});
