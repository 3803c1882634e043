import type { SignInOutputs, SignInRoute } from '../../../shared/sign-in-api.ts';

/**
 * Why a sign-in route refused, as the page words it: `failed` (401: the same for an unknown
 * account as for a wrong password), `throttled` (429, with the wait), `link` (the link is used,
 * expired or replaced), `invalid` (the server's own words, e.g. a password too short),
 * `unreachable`.
 */
export type SignInProblem =
  | { kind: 'failed' }
  | { kind: 'throttled'; minutes: number }
  | { kind: 'link' }
  | { kind: 'invalid'; message: string }
  | { kind: 'unreachable'; message: string };

export type SignInAnswer<R extends SignInRoute> = { ok: true; value: SignInOutputs[R] } | { ok: false; problem: SignInProblem };

/** `POST /api/auth/<route>` without a token: the only console calls a page makes before it has one. */
export async function signInCall<R extends SignInRoute>(route: R, input: unknown): Promise<SignInAnswer<R>> {
  let res: Response;
  let body: { ok: boolean; value?: SignInOutputs[R]; error?: { code: string; message: string; retryAfterSeconds?: number } };
  try {
    res = await fetch(`/api/auth/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(input) });
    body = (await res.json()) as typeof body;
  } catch (error) {
    return { ok: false, problem: { kind: 'unreachable', message: (error as Error).message } };
  }
  if (body.ok && body.value !== undefined) return { ok: true, value: body.value };
  if (res.status === 429) {
    const seconds = body.error?.retryAfterSeconds ?? Number(res.headers.get('retry-after') ?? 60);
    return { ok: false, problem: { kind: 'throttled', minutes: Math.max(1, Math.ceil(seconds / 60)) } };
  }
  if (res.status === 401) return { ok: false, problem: { kind: 'failed' } };
  if (body.error?.code === 'link_not_valid') return { ok: false, problem: { kind: 'link' } };
  return { ok: false, problem: { kind: 'invalid', message: body.error?.message ?? `HTTP ${res.status}` } };
}
