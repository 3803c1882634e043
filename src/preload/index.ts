import { contextBridge } from 'electron';

// Narrow bridge: the renderer learns only what it is given here. The typed console API
// (src/shared/console-api.ts) is exposed through this file as it grows.
contextBridge.exposeInMainWorld('switchboard', {
  runtime: 'electron' as const,
});
