import { z } from 'zod';

/**
 * Team mode's sign-in (protocol v1.2, section 9), over HTTP only: the desktop window is the owner
 * and never signs in. Each route is `POST /api/auth/<name>` with a JSON body; answers are data,
 * `{ ok: true, value }` or `{ ok: false, error: { code, message } }`, like the console API.
 *
 * - `signIn`: an account id and password; a session token the page keeps and sends as
 *   `Authorization: Bearer`. A wrong password, an unknown, disabled or not yet activated account
 *   all get the same 401 `sign_in_failed`; too many failures get 429 `too_many_attempts` with
 *   `Retry-After`.
 * - `linkInfo`: who a one-time sign-in link is for (it stays usable).
 * - `usePasswordLink`: a link and the password the agent chooses; signs them in. The link is
 *   used up.
 * Sign-out is the console method `signOut`.
 */
export const signInInputs = {
  signIn: z.object({ id: z.string().trim().min(1, 'give your account id').max(64), password: z.string().min(1, 'give your password').max(4096) }),
  linkInfo: z.object({ link: z.string().min(1).max(256) }),
  usePasswordLink: z.object({ link: z.string().min(1).max(256), password: z.string().max(4096) }),
} as const;

export type SignInRoute = keyof typeof signInInputs;
export const SIGN_IN_ROUTES = Object.keys(signInInputs) as SignInRoute[];

export interface SignedIn {
  /** The session token: the page keeps it (never in a cookie) and sends it as a bearer token. */
  token: string;
  account: { id: string; name: string; role: 'admin' | 'agent' };
}

export interface SignInOutputs {
  signIn: SignedIn;
  linkInfo: { id: string; name: string; expiresAt: number };
  usePasswordLink: SignedIn;
}

/** Protocol v1.2, team mode: a password has at least 12 characters (code points, as a person counts them). */
export const PASSWORD_MIN = 12;

/** Where a sign-in link takes the agent: the console page, with the link secret in the fragment. */
export const LINK_FRAGMENT = 'sign-in-link';
