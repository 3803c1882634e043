import { app, BrowserWindow, ipcMain, Menu, session, type IpcMainEvent, type IpcMainInvokeEvent, type WebContents } from 'electron';
import type { ApiResult } from '../../shared/console-api.ts';
import { TEAM_IPC } from '../../shared/team-ipc.ts';
import { sessionTokenInput, teamConnectInput, teamUrlInput } from '../../shared/team-server.ts';
import { isTrustedSender } from '../console-api/ipc.ts';
import { fingerprintOfPem } from './fingerprint.ts';
import type { TeamClient } from './team-client.ts';
import { appMenuTemplate } from './team-menu.ts';
import { allowsNavigation, isTeamFrame, TEAM_PARTITION, teamPermission, teamWindowOptions } from './team-window.ts';

export interface TeamShellOptions {
  client: TeamClient;
  /** The local console window: hidden while a team server is shown, never closed. */
  localWindow: BrowserWindow;
  /** The local console page (file://): the only frame whose IPC may probe and connect. */
  rendererIndex: string;
  /** out/preload/team.cjs: the remote window's narrow bridge. */
  teamPreload: string;
}

const refused = (message: string): ApiResult<never> => ({ ok: false, error: { code: 'forbidden', message } });
const invalid = (message: string): ApiResult<never> => ({ ok: false, error: { code: 'invalid_input', message } });

/**
 * Electron glue of "Connect to a team server": windows, IPC, menu, the remote session's
 * certificate check. Every decision is made by the tested modules beside it (team-client.ts,
 * certificate-decision.ts, team-window.ts, team-menu.ts); this file only wires them, so it runs
 * only under Electron and has no test of its own.
 */
export function wireTeamShell(o: TeamShellOptions) {
  const local = o.localWindow;
  let remote: BrowserWindow | null = null;
  let origin: string | null = null;
  let lastRefusal: string | null = null;
  let switching = false;

  const teamSession = session.fromPartition(TEAM_PARTITION);
  teamSession.setCertificateVerifyProc((request, callback) => {
    let fingerprint = '';
    try {
      fingerprint = fingerprintOfPem(request.certificate.data);
    } catch {
      return callback(-2);
    }
    const verdict = o.client.verdict(request.hostname, fingerprint, request.verificationResult === 'OK');
    if (verdict.refusal) lastRefusal = verdict.refusal;
    callback(verdict.result);
  });
  teamSession.setPermissionRequestHandler((_wc, permission, callback, details) => callback(teamPermission(permission, details.requestingUrl, origin)));
  teamSession.setPermissionCheckHandler((_wc, permission, requestingOrigin) => teamPermission(permission, requestingOrigin, origin));

  const fromLocal = (event: IpcMainInvokeEvent): boolean => event.sender === local.webContents && isTrustedSender(event.senderFrame?.url, o.rendererIndex);
  const fromRemote = (event: IpcMainInvokeEvent | IpcMainEvent): boolean => remote !== null && event.sender === remote.webContents && isTeamFrame(event.senderFrame?.url, origin);

  function updateMenu(): void {
    Menu.setApplicationMenu(Menu.buildFromTemplate(appMenuTemplate(origin, { connect: () => backToLocal(null, true), signOut: () => void signOut(), useThisComputer })));
  }

  function closeRemote(): void {
    const closing = remote;
    remote = null;
    origin = null;
    if (closing && !closing.isDestroyed()) {
      switching = true;
      closing.destroy();
      switching = false;
    }
  }

  function openRemote(target: string, url: string): void {
    closeRemote();
    origin = target;
    lastRefusal = null;
    const win = new BrowserWindow(teamWindowOptions(o.teamPreload, target));
    remote = win;
    win.webContents.on('will-redirect', (event, to) => {
      if (!allowsNavigation(to, target)) event.preventDefault();
    });
    win.webContents.on('did-fail-load', (_event, code, description, _url, isMainFrame) => {
      // -3 (ERR_ABORTED) is a navigation replaced or refused by the rule above, not a failure to connect.
      if (isMainFrame && code !== -3 && remote === win) backToLocal(`cannot open ${target}: ${lastRefusal ?? description}`, true);
    });
    win.once('ready-to-show', () => {
      if (remote !== win) return;
      win.show();
      local.hide();
    });
    win.on('closed', () => {
      if (remote === win) remote = origin = null;
      // Closing the team server's window closes the app, as closing the local one does.
      if (!switching && remote === null && !local.isVisible()) app.quit();
    });
    void win.loadURL(url);
    updateMenu();
  }

  function backToLocal(message: string | null, openDialog = false): void {
    closeRemote();
    if (local.isMinimized()) local.restore();
    local.show();
    local.focus();
    if (openDialog) local.webContents.send(TEAM_IPC.openDialog, message);
    updateMenu();
  }

  function useThisComputer(): void {
    o.client.useThisComputer();
    backToLocal(null);
  }

  async function signOut(): Promise<void> {
    if (!origin || !remote) return;
    const win = remote;
    const result = await o.client.signOut(origin);
    // The page's copy of the token lives in the in-memory session: cleared, the page asks to sign in.
    await teamSession.clearStorageData({ storages: ['localstorage'] });
    if (!win.isDestroyed()) win.reload();
    if (!result.ok) lastRefusal = result.error.message;
  }

  ipcMain.handle(TEAM_IPC.probe, (event, input: unknown) => {
    if (!fromLocal(event)) return refused('only the local console window may check a team server');
    const parsed = teamUrlInput.safeParse(input);
    return parsed.success ? o.client.probe(parsed.data.url) : invalid(parsed.error.issues[0]!.message);
  });
  ipcMain.handle(TEAM_IPC.connect, async (event, input: unknown) => {
    if (!fromLocal(event)) return refused('only the local console window may connect to a team server');
    const parsed = teamConnectInput.safeParse(input);
    if (!parsed.success) return invalid(parsed.error.issues[0]!.message);
    const result = await o.client.connect(parsed.data.url, parsed.data.fingerprint);
    if (!result.ok) return result;
    openRemote(result.value.origin, result.value.url);
    return { ok: true, value: { origin: result.value.origin } };
  });
  ipcMain.handle(TEAM_IPC.forget, (event, input: unknown) => {
    if (!fromLocal(event)) return refused('only the local console window may forget a certificate');
    const parsed = teamUrlInput.safeParse(input);
    return parsed.success ? o.client.forget(parsed.data.url) : invalid(parsed.error.issues[0]!.message);
  });
  // Synchronous: the preload reads the kept token before the page's first script runs.
  ipcMain.on(TEAM_IPC.loadSession, (event) => {
    event.returnValue = fromRemote(event) && origin ? o.client.loadSession(origin) : null;
  });
  ipcMain.handle(TEAM_IPC.saveSession, (event, token: unknown) => {
    if (!fromRemote(event) || !origin) return refused('only the team server\'s own page may keep its session');
    const parsed = sessionTokenInput.safeParse(token);
    return parsed.success ? o.client.saveSession(origin, parsed.data) : invalid('not a session token');
  });
  ipcMain.handle(TEAM_IPC.clearSession, (event) => {
    if (fromRemote(event)) o.client.clearSession();
  });
  ipcMain.handle(TEAM_IPC.useThisComputer, (event) => {
    if (fromRemote(event)) useThisComputer();
  });

  updateMenu();
  return {
    /** Whether a team server is shown (the local service's alerts then stay quiet). */
    active: (): boolean => remote !== null,
    /** The one exception to "no navigation": the remote window within its own origin. */
    allowsNavigation: (contents: WebContents, url: string): boolean => remote !== null && contents === remote.webContents && origin !== null && allowsNavigation(url, origin),
    /** Opens the server the user was connected to when the app last closed, if any. */
    start(): void {
      const server = o.client.activeServer();
      if (server) openRemote(server, `${server}/`);
    },
  };
}

export type TeamShell = ReturnType<typeof wireTeamShell>;
