import type { MenuItemConstructorOptions } from 'electron';

export interface TeamMenuActions {
  connect(): void;
  signOut(): void;
  useThisComputer(): void;
}

/**
 * The application menu: Electron's standard menus (so copy, paste and the shortcuts keep working)
 * and a Team menu. Sign-out and the way back only make sense while a team server is shown. Data,
 * so it is tested without the Electron binary.
 */
export function appMenuTemplate(connectedTo: string | null, actions: TeamMenuActions, platform: NodeJS.Platform = process.platform): MenuItemConstructorOptions[] {
  const team: MenuItemConstructorOptions = {
    label: 'Team',
    submenu: [
      { id: 'team-connect', label: 'Connect to a team server…', click: () => actions.connect() },
      { type: 'separator' },
      { id: 'team-sign-out', label: connectedTo ? `Sign out of ${new URL(connectedTo).host}` : 'Sign out', enabled: connectedTo !== null, click: () => actions.signOut() },
      { id: 'team-local', label: 'Use this computer\'s own service', enabled: connectedTo !== null, click: () => actions.useThisComputer() },
    ],
  };
  return [...(platform === 'darwin' ? [{ role: 'appMenu' } as const] : []), { role: 'fileMenu' }, { role: 'editMenu' }, team, { role: 'viewMenu' }, { role: 'windowMenu' }];
}
