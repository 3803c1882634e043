import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import type { ApiResult, ConsoleEvent, ConsoleMethod } from '../shared/console-api.ts';

// Narrow bridge: one typed call and one event subscription, nothing of Node or Electron leaks.
// The renderer derives its full client from METHOD_NAMES in src/shared/console-api.ts.
contextBridge.exposeInMainWorld('switchboard', {
  call: (method: ConsoleMethod, input: unknown): Promise<ApiResult<unknown>> => ipcRenderer.invoke('switchboard:call', method, input),
  onEvent(listener: (event: ConsoleEvent) => void): () => void {
    const wrapped = (_e: IpcRendererEvent, event: ConsoleEvent): void => listener(event);
    ipcRenderer.on('switchboard:event', wrapped);
    return () => ipcRenderer.off('switchboard:event', wrapped);
  },
});
