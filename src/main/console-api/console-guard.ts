import type { IncomingMessage } from 'node:http';
import { acceptsHost, acceptsOrigin, describeAccess, LOOPBACK_ACCESS, type ConsoleAccess } from './console-access.ts';

/** Why a console request is refused, before any handler sees it. */
export interface Refusal {
  status: number;
  code: string;
  message: string;
  headers?: Record<string, string>;
}

export const NO_TOKEN_HINT = 'open the console URL that serve printed (its #token=… part), or run `npm run cli -- console rotate-token` for a new one';

/** DNS rebinding: a page of attacker.example resolving to 127.0.0.1 still sends its own Host. */
export function checkHost(req: IncomingMessage, access: ConsoleAccess = LOOPBACK_ACCESS): Refusal | null {
  if (acceptsHost(access, req.headers.host ?? '')) return null;
  return { status: 421, code: 'misdirected_request', message: describeAccess(access) };
}

/** The query string reaches logs and Referer headers: the token belongs in the fragment. */
export function checkNoQueryToken(url: URL): Refusal | null {
  if (!url.searchParams.has('token')) return null;
  return {
    status: 400,
    code: 'token_in_query',
    message: 'the console token goes in the URL fragment (#token=…), never in the query (?token=…): ' + NO_TOKEN_HINT,
  };
}

/**
 * What a browser says about where a request came from. Another port of 127.0.0.1 is another
 * origin but the same site, so both `Origin` and `Sec-Fetch-Site: same-site` are refused; a
 * request without either (curl, scripts) is judged by its token alone.
 */
export function checkOrigin(req: IncomingMessage, access: ConsoleAccess = LOOPBACK_ACCESS): Refusal | null {
  const origin = req.headers.origin;
  if (origin !== undefined && !acceptsOrigin(access, origin, req.headers.host ?? '')) {
    return { status: 403, code: 'forbidden_origin', message: `requests from ${origin.slice(0, 100)} are refused: the console API answers only its own page` };
  }
  const site = req.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') {
    return { status: 403, code: 'forbidden_origin', message: `a ${site} request is refused: the console API answers only its own page` };
  }
  return null;
}

/** `Authorization: Bearer` only: a cookie or a query parameter never authorizes. */
/** The token of `Authorization: Bearer <token>`, or null. */
export function bearerToken(req: IncomingMessage): string | null {
  return /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '')?.[1] ?? null;
}

/** The caller a request's bearer token stands for (the owner's console token, or an agent's session), or why none. */
export async function checkCaller<C>(req: IncomingMessage, callerOf: (token: string) => Promise<C | null>): Promise<{ caller: C } | Refusal> {
  const given = bearerToken(req);
  const caller = given && given.length <= 256 ? await callerOf(given) : null;
  if (caller) return { caller };
  return {
    status: 401,
    code: 'unauthorized',
    message: `console token ${given ? 'refused' : 'missing'}: ${NO_TOKEN_HINT}; in team mode, sign in again`,
    headers: { 'www-authenticate': 'Bearer realm="switchboard-console"' },
  };
}
