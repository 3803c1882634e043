import type { TeamSessionBridge } from '../../../shared/team-ipc.ts';

declare global {
  interface Window {
    /** Only in the desktop's window on a team server (src/preload/team.ts); absent everywhere else. */
    switchboardTeam?: TeamSessionBridge;
  }
}

/**
 * The session token of a team server shown in the desktop app. The window's own storage lives in
 * memory only; between runs main keeps the token encrypted (Electron safeStorage). In a browser
 * (no bridge) every function here does nothing.
 */
let kept: string | null = window.switchboardTeam?.keptSession() ?? null;
let problem: string | null = null;
const listeners = new Set<() => void>();

/** The token main kept from an earlier run, to use when the page has none. */
export function keptSession(): string | null {
  return kept;
}

/** The server accepted `token`: keep it (once per token) for the next run. */
export function keepSession(token: string): void {
  const bridge = window.switchboardTeam;
  if (!bridge || token === kept) return;
  kept = token;
  void bridge.saveSession(token).then((result) => {
    // Without an encrypted store main refuses to write it: the page says so, and works on.
    const next = result.ok ? null : result.error.code;
    if (next === problem) return;
    problem = next;
    for (const l of listeners) l();
  });
}

/** The server refused `token` (signed out, expired, revoked): forget the kept copy too. */
export function forgetSession(token: string | null): void {
  const bridge = window.switchboardTeam;
  if (!bridge || kept === null || (token !== null && token !== kept)) return;
  kept = null;
  void bridge.clearSession();
}

/** Why the session is not remembered (`encryption_unavailable`), or null. */
export function sessionProblem(): string | null {
  return problem;
}

export function onSessionProblem(listener: () => void): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}
