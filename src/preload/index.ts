import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import type { ApiResult, ConsoleEvent, ConsoleMethod } from '../shared/console-api.ts';
import { TEAM_IPC, type TeamDialogBridge } from '../shared/team-ipc.ts';

// The Team server dialog of the local window: check a server, connect, forget a replaced certificate.
const team: TeamDialogBridge = {
  probe: (url) => ipcRenderer.invoke(TEAM_IPC.probe, { url }),
  connect: (url, fingerprint) => ipcRenderer.invoke(TEAM_IPC.connect, { url, fingerprint }),
  forget: (url) => ipcRenderer.invoke(TEAM_IPC.forget, { url }),
  onOpenDialog(listener) {
    const wrapped = (_e: IpcRendererEvent, message: unknown): void => listener(typeof message === 'string' ? message : null);
    ipcRenderer.on(TEAM_IPC.openDialog, wrapped);
    return () => ipcRenderer.off(TEAM_IPC.openDialog, wrapped);
  },
};

// Narrow bridge: one typed call and one event subscription, nothing of Node or Electron leaks.
// The renderer derives its full client from METHOD_NAMES in src/shared/console-api.ts.
contextBridge.exposeInMainWorld('switchboard', {
  call: (method: ConsoleMethod, input: unknown): Promise<ApiResult<unknown>> => ipcRenderer.invoke('switchboard:call', method, input),
  onEvent(listener: (event: ConsoleEvent) => void): () => void {
    const wrapped = (_e: IpcRendererEvent, event: ConsoleEvent): void => listener(event);
    ipcRenderer.on('switchboard:event', wrapped);
    return () => ipcRenderer.off('switchboard:event', wrapped);
  },
  team,
});
