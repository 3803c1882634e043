import { contextBridge, ipcRenderer } from 'electron';
import type { ApiResult } from '../shared/console-api.ts';
import type { TEAM_IPC, TeamSessionBridge } from '../shared/team-ipc.ts';

// The team server's page, in the desktop's remote window: it may keep, read and forget its
// session token (main encrypts it) and switch back to this computer's service. Nothing else.
// The channels are spelt here, checked against TEAM_IPC by the compiler: a value import would
// make the bundler share a chunk with the other preload, and a sandboxed preload cannot require one.
const CHANNELS: Pick<typeof TEAM_IPC, 'loadSession' | 'saveSession' | 'clearSession' | 'useThisComputer'> = {
  loadSession: 'switchboard:team:session-load',
  saveSession: 'switchboard:team:session-save',
  clearSession: 'switchboard:team:session-clear',
  useThisComputer: 'switchboard:team:use-this-computer',
};

// Read once, synchronously, so the page has it before its first script runs.
const kept: unknown = ipcRenderer.sendSync(CHANNELS.loadSession);

const bridge: TeamSessionBridge = {
  keptSession: () => (typeof kept === 'string' ? kept : null),
  saveSession: (token: string): Promise<ApiResult<{ remembered: boolean }>> => ipcRenderer.invoke(CHANNELS.saveSession, token),
  clearSession: (): Promise<void> => ipcRenderer.invoke(CHANNELS.clearSession),
  useThisComputer: (): Promise<void> => ipcRenderer.invoke(CHANNELS.useThisComputer),
};
contextBridge.exposeInMainWorld('switchboardTeam', bridge);
