import type { BrowserWindowConstructorOptions } from 'electron';

/**
 * The console window per Electron's security checklist: isolated, sandboxed, no Node in the
 * renderer, no webviews. Kept as data so it is tested without the Electron binary.
 */
export function consoleWindowOptions(preloadPath: string): BrowserWindowConstructorOptions {
  return {
    width: 1280,
    height: 820,
    minWidth: 900,
    minHeight: 560,
    title: 'Switchboard',
    show: false,
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webviewTag: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
      spellcheck: false,
    },
  };
}
