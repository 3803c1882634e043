import type { BrowserWindowConstructorOptions } from 'electron';
import { consoleWindowOptions } from '../window/window-options.ts';

/**
 * The remote console's session: in memory only (no `persist:` prefix), so the page's storage
 * (its session token in localStorage) never reaches the disk in the clear; the token survives a
 * restart only through the encrypted session store.
 */
export const TEAM_PARTITION = 'switchboard-team-server';

/**
 * The window that shows a team server's console: the local window's hardening (isolated,
 * sandboxed, no Node, no webviews), its own in-memory session, and a preload that exposes only
 * the session token's keeping and the way back to this computer's service. Data, so it is tested
 * without the Electron binary.
 */
export function teamWindowOptions(preloadPath: string, origin: string): BrowserWindowConstructorOptions {
  const local = consoleWindowOptions(preloadPath);
  return {
    ...local,
    title: `Switchboard — ${new URL(origin).host}`,
    webPreferences: { ...local.webPreferences, preload: preloadPath, partition: TEAM_PARTITION, safeDialogs: true },
  };
}

function originOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/** The remote window navigates (and is redirected) within the connected origin only; links elsewhere open in the browser. */
export function allowsNavigation(url: string, connectedOrigin: string): boolean {
  return originOf(url) === connectedOrigin && connectedOrigin.startsWith('https://');
}

/** IPC from the remote window counts only from a frame of the connected origin. */
export function isTeamFrame(frameUrl: string | undefined, connectedOrigin: string | null): boolean {
  return connectedOrigin !== null && originOf(frameUrl) === connectedOrigin;
}

/** The remote console may show notifications (its alerts), nothing else: no camera, location, clipboard… */
export function teamPermission(permission: string, requestingUrl: string | undefined, connectedOrigin: string | null): boolean {
  return permission === 'notifications' && connectedOrigin !== null && originOf(requestingUrl) === connectedOrigin;
}
