import { forgetSession as forgetKeptSession, keepSession as keepTeamSession, keptSession } from './team-session.ts';
import { LINK_FRAGMENT } from '../../../shared/sign-in-api.ts';

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
/**
 * Team mode: the stored token is an agent's session (not the owner's console token), with the
 * account it signed in as. Kept beside the token, so a refusal can say "your session ended"
 * instead of pointing at the URL serve printed, and the console knows the role before whoAmI.
 */
const SESSION = 'sb.consoleToken.session';
/** Set by sign-out just before the page reloads: the sign-in page then says so. Per tab. */
const SIGNED_OUT = 'sb.signedOut';

/** missing/refused: no console token or a refused one; ended: a session refused (signed out elsewhere, expired, disabled); signed_out: by this tab. */
export type AuthState = 'ok' | 'missing' | 'refused' | 'ended' | 'signed_out';

let state: AuthState = 'ok';
/** A one-time sign-in link taken from the address bar (`#sign-in-link=…`), kept only in memory. */
let link: string | null = null;
/** This page started with an agent's session: a token gone meanwhile (sign-out in another tab) is a session that ended. */
let onSession = false;
const listeners = new Set<() => void>();

function set(next: AuthState): void {
  if (next === state) return;
  state = next;
  for (const l of listeners) l();
}

/** Takes `name` out of the fragment, leaving the rest of it. */
function takeFromHash(name: string): string | null {
  const params = new URLSearchParams(location.hash.slice(1));
  const value = params.get(name);
  if (!value) return null;
  params.delete(name);
  const rest = params.toString();
  history.replaceState(history.state, '', `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`);
  return value;
}

function moveTokenFromUrl(): boolean {
  const token = takeFromHash('token');
  if (!token) return false;
  const current = localStorage.getItem(KEY);
  // An agent's session is not kept in reserve: the printed URL is the owner's way in.
  if (current !== null && current !== token && localStorage.getItem(PREVIOUS) === null && localStorage.getItem(SESSION) === null) localStorage.setItem(PREVIOUS, current);
  localStorage.setItem(KEY, token);
  localStorage.removeItem(SESSION);
  return true;
}

/** Moves `#token=…` (or a sign-in link) from the address bar; call once, before the first API call. */
export function takeTokenFromUrl(): void {
  moveTokenFromUrl();
  // The desktop's window on a team server starts with empty storage: the session kept from the last run.
  const kept = keptSession();
  if (!localStorage.getItem(KEY) && kept !== null) localStorage.setItem(KEY, kept);
  link = takeFromHash(LINK_FRAGMENT);
  onSession = localStorage.getItem(SESSION) !== null;
  const signedOut = sessionStorage.getItem(SIGNED_OUT) !== null;
  sessionStorage.removeItem(SIGNED_OUT);
  if (!localStorage.getItem(KEY)) set(signedOut ? 'signed_out' : 'missing');
  // Opening the printed URL (or a sign-in link) in a tab already on this page changes only the
  // fragment, which reloads nothing: start again with it.
  window.addEventListener('hashchange', () => {
    if (new URLSearchParams(location.hash.slice(1)).has(LINK_FRAGMENT) || moveTokenFromUrl()) location.reload();
  });
}

/** The sign-in link this page was opened with, if any (the agent chooses their password there). */
export function signInLink(): string | null {
  return link;
}

/** The link page is done with (used, or the agent went to the sign-in form). */
export function forgetSignInLink(): void {
  link = null;
}

export interface SessionAccount {
  id: string;
  name: string;
  role: 'admin' | 'agent';
}

/** Signed in: the session token goes where the console token is kept, and is sent the same way. */
export function keepSession(token: string, account: SessionAccount): void {
  localStorage.setItem(KEY, token);
  localStorage.setItem(SESSION, JSON.stringify(account));
  localStorage.removeItem(PREVIOUS);
}

/** The account the stored session signed in as; null for the owner's console token (or none). */
export function sessionAccount(): SessionAccount | null {
  try {
    const raw = JSON.parse(localStorage.getItem(SESSION) ?? 'null') as Partial<SessionAccount> | null;
    if (raw && typeof raw.id === 'string' && typeof raw.name === 'string' && (raw.role === 'admin' || raw.role === 'agent')) return { id: raw.id, name: raw.name, role: raw.role };
  } catch {
    // not ours: as if none
  }
  return null;
}

/** After sign-out: the token is forgotten and the page starts again at the sign-in form. */
export function forgetSession(): void {
  forgetKeptSession(localStorage.getItem(KEY));
  localStorage.removeItem(KEY);
  localStorage.removeItem(SESSION);
  sessionStorage.setItem(SIGNED_OUT, '1');
  location.reload();
}

export function consoleToken(): string | null {
  return localStorage.getItem(KEY);
}

/** The server took `token`: a token kept in reserve is no longer needed. */
export function tokenAccepted(token: string): void {
  if (localStorage.getItem(KEY) === token) localStorage.removeItem(PREVIOUS);
  keepTeamSession(token);
}

/**
 * The server answered 401: forget the token (unless another tab stored a newer one). A token kept
 * from before a new `#token=` comes back, and the page starts again with it.
 */
export function tokenRefused(token: string | null): void {
  forgetKeptSession(token);
  if (token === null && onSession && localStorage.getItem(KEY) === null) return set('ended');
  if (token !== null && localStorage.getItem(KEY) === token && localStorage.getItem(SESSION) !== null) {
    // A session ends for good (sign-out elsewhere, 12 h idle, 30 days, disabled or reset): sign in again.
    localStorage.removeItem(KEY);
    localStorage.removeItem(SESSION);
    return set('ended');
  }
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
