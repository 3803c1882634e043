import { app, BrowserWindow, ipcMain, Notification, safeStorage, session, shell } from 'electron';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startService, type RunningService } from './service.ts';
import { loadServerConfig } from './config/server-config.ts';
import { combinedBox, keychainBox, keyFileBox } from './auth/secret-box.ts';
import { consoleWindowOptions } from './window/window-options.ts';
import { alertNotification } from './window/alert-notification.ts';
import { secretKeyPath } from './store/data-dir.ts';
import { createIpcHandler, IPC_CALL, IPC_EVENT } from './console-api/ipc.ts';
import { ownerCallerOf } from './console-api/operator-guard.ts';
import { createTeamClient } from './team-client/team-client.ts';
import { wireTeamShell, type TeamShell } from './team-client/team-shell.ts';

// Composition root of the desktop app: wires the service into a secure window, decides nothing.
let service: RunningService | undefined;
let team: TeamShell | undefined;
const here = fileURLToPath(new URL('.', import.meta.url));

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', () => {
    const win = BrowserWindow.getAllWindows()[0];
    if (win) {
      if (win.isMinimized()) win.restore();
      win.focus();
    }
  });

  app.on('web-contents-created', (_event, contents) => {
    contents.on('will-navigate', (event, url) => {
      if (!team?.allowsNavigation(contents, url)) event.preventDefault();
    });
    contents.setWindowOpenHandler(({ url }) => {
      if (/^https?:\/\//.test(url)) void shell.openExternal(url);
      return { action: 'deny' };
    });
    contents.on('will-attach-webview', (event) => event.preventDefault());
  });

  void app.whenReady().then(async () => {
    session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
    // The window's CSP is the <meta> the build writes into index.html (src/shared/csp.ts): the
    // page comes from file://, where a response-header policy never applies.
    const dataDir = process.env['SWITCHBOARD_DATA_DIR'] ?? app.getPath('userData');
    const keyFile = keyFileBox(secretKeyPath(dataDir));
    const secretBox = safeStorage.isEncryptionAvailable() ? combinedBox([keychainBox(safeStorage), keyFile]) : keyFile;
    service = await startService({ config: loadServerConfig(dataDir), dataDir, secretBox, writerEntry: join(here, 'writer-worker.js'), engineWorkerEntry: join(here, 'engine-worker.js'), readerEntry: join(here, 'reader-worker.js') });
    const rendererIndex = join(here, '../renderer/index.html');
    const accounts = service.store.accounts;
    // The desktop's store is SQLite: the owner is read at each call and event, synchronously.
    const ipc = createIpcHandler(service.console.handlers, rendererIndex, () => ownerCallerOf(accounts.owner(), null));
    ipcMain.handle(IPC_CALL, (event, method: unknown, input: unknown) => ipc(event.senderFrame?.url, method, input));
    const win = new BrowserWindow(consoleWindowOptions(join(here, '../preload/index.cjs')));
    // The window is the owner's console: in team mode it gets the owner's own alerts, assignments and mentions.
    service.console.events.subscribe((event) => {
      if (win.isDestroyed()) return;
      win.webContents.send(IPC_EVENT, event);
      // While a team server is shown, its console alerts; this computer's own service stays quiet.
      const note = team?.active() ? null : alertNotification(event, win.isFocused());
      if (note && Notification.isSupported()) {
        const shown = new Notification(note);
        shown.on('click', () => {
          if (win.isDestroyed()) return;
          if (win.isMinimized()) win.restore();
          win.show();
          win.focus();
        });
        shown.show();
      }
    }, { caller: () => ownerCallerOf(accounts.owner(), null) });
    team = wireTeamShell({ client: createTeamClient({ dataDir, keychain: safeStorage }), localWindow: win, rendererIndex, teamPreload: join(here, '../preload/team.cjs') });
    win.once('ready-to-show', () => {
      if (!team?.active()) win.show();
    });
    await win.loadFile(rendererIndex);
    team.start();
  });

  app.on('window-all-closed', () => app.quit());
  app.on('before-quit', (event) => {
    if (!service) return;
    event.preventDefault();
    const s = service;
    service = undefined;
    void s.stop().finally(() => app.quit());
  });
}
