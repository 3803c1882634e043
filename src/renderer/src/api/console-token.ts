import { forgetSession, keepSession, keptSession } from './team-session.ts';

/**
 * The headless console's token (protocol section 9). `serve` prints it in the URL fragment, which
 * a browser never sends to a server; the page moves it into localStorage and out of the address
 * bar, and sends it as `Authorization: Bearer` on every API call. localStorage, not
 * sessionStorage: a new tab, a bookmark of the bare address or a browser restart keeps working
 * without the terminal. Only pages of this exact origin (scheme, host and port) can read it.
 */
const KEY = 'sb.consoleToken';
/**
 * The token that worked before a `#token=` arrived. Any local page can send the browser here with
 * a wrong one: it must not sign the operator out, so the old one stays until the new one is
 * accepted, and comes back if the new one is refused.
 */
const PREVIOUS = 'sb.consoleToken.previous';

export type AuthState = 'ok' | 'missing' | 'refused';

let state: AuthState = 'ok';
const listeners = new Set<() => void>();

function set(next: AuthState): void {
  if (next === state) return;
  state = next;
  for (const l of listeners) l();
}

function moveTokenFromUrl(): boolean {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get('token');
  if (!token) return false;
  const current = localStorage.getItem(KEY);
  if (current !== null && current !== token && localStorage.getItem(PREVIOUS) === null) localStorage.setItem(PREVIOUS, current);
  localStorage.setItem(KEY, token);
  params.delete('token');
  const rest = params.toString();
  history.replaceState(history.state, '', `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`);
  return true;
}

/** Moves `#token=…` from the address bar into storage; call once, before the first API call. */
export function takeTokenFromUrl(): void {
  moveTokenFromUrl();
  // The desktop's window on a team server starts with empty storage: the session kept from the last run.
  const kept = keptSession();
  if (!localStorage.getItem(KEY) && kept !== null) localStorage.setItem(KEY, kept);
  if (!localStorage.getItem(KEY)) set('missing');
  // Opening the printed URL in a tab already on this page changes only the fragment, which
  // reloads nothing: start again with the new token.
  window.addEventListener('hashchange', () => {
    if (moveTokenFromUrl()) location.reload();
  });
}

export function consoleToken(): string | null {
  return localStorage.getItem(KEY);
}

/** The server took `token`: a token kept in reserve is no longer needed. */
export function tokenAccepted(token: string): void {
  if (localStorage.getItem(KEY) === token) localStorage.removeItem(PREVIOUS);
  keepSession(token);
}

/**
 * The server answered 401: forget the token (unless another tab stored a newer one). A token kept
 * from before a new `#token=` comes back, and the page starts again with it.
 */
export function tokenRefused(token: string | null): void {
  forgetSession(token);
  if (token !== null && localStorage.getItem(KEY) === token) {
    const previous = localStorage.getItem(PREVIOUS);
    localStorage.removeItem(PREVIOUS);
    if (previous !== null && previous !== token) {
      localStorage.setItem(KEY, previous);
      location.reload();
      return;
    }
    localStorage.removeItem(KEY);
  }
  set(token === null ? 'missing' : 'refused');
}

export function authState(): AuthState {
  return state;
}

export function onAuthChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}
