import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConsoleAccounts } from '../accounts/console-accounts.ts';
import { signInInputs, type SignInRoute } from '../../shared/sign-in-api.ts';
import { readJsonBody } from './console-body.ts';
import type { Refusal } from './console-guard.ts';
import { assertNever } from '../../shared/assert-never.ts';

type Refuse = (req: IncomingMessage, res: ServerResponse, r: Refusal, asData: boolean) => void;
type Answer = (res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>) => void;

/** Said for every refused sign-in, whatever the reason: it never tells whether the account exists. */
export const SIGN_IN_FAILED = 'that account id and password do not match an active account';

/**
 * `POST /api/auth/<route>` (src/shared/sign-in-api.ts): the only console calls made without a
 * bearer token. The Origin check has run already; the JSON content type is required as for every
 * state change, so a form on another site cannot post a guess.
 */
export async function signInRoute(req: IncomingMessage, res: ServerResponse, route: string, accounts: ConsoleAccounts, address: string, refuse: Refuse, answer: Answer): Promise<void> {
  if (!Object.hasOwn(signInInputs, route)) return refuse(req, res, { status: 404, code: 'unknown_method', message: `no sign-in route "${route.slice(0, 64)}"` }, true);
  if (req.method !== 'POST') return refuse(req, res, { status: 405, code: 'method_not_allowed', message: 'sign-in routes are called with POST', headers: { allow: 'POST' } }, true);
  const body = await readJsonBody(req);
  if (!('input' in body)) return refuse(req, res, body, true);
  const name = route as SignInRoute;
  const parsed = signInInputs[name].safeParse(body.input);
  if (!parsed.success) {
    const message = parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ');
    return answer(res, 400, { ok: false, error: { code: 'invalid_input', message } });
  }
  switch (name) {
    case 'signIn': {
      const { id, password } = parsed.data as { id: string; password: string };
      const result = await accounts.signIn({ id, password }, address);
      if (result.ok) return answer(res, 200, result);
      const { error } = result;
      if (error.code === 'busy') {
        return answer(res, 503, { ok: false, error: { code: error.code, message: 'too many sign-ins at once: try again in a second', retryAfterSeconds: 1 } }, { 'retry-after': '1' });
      }
      if (error.code === 'too_many_attempts') {
        const message = `too many failed sign-ins: try again in ${Math.ceil(error.retryAfterSeconds / 60)} min`;
        return answer(res, 429, { ok: false, error: { code: error.code, message, retryAfterSeconds: error.retryAfterSeconds } }, { 'retry-after': String(error.retryAfterSeconds) });
      }
      return answer(res, 401, { ok: false, error: { code: error.code, message: SIGN_IN_FAILED } });
    }
    case 'linkInfo': {
      const info = await accounts.linkInfo((parsed.data as { link: string }).link);
      if (!info) return answer(res, 404, { ok: false, error: { code: 'link_not_valid', message: 'this sign-in link is used, expired or replaced: ask an admin for a new one' } });
      return answer(res, 200, { ok: true, value: info });
    }
    case 'usePasswordLink': {
      const result = await accounts.usePasswordLink(parsed.data as { link: string; password: string }, address);
      if (result.ok) return answer(res, 200, result);
      const status = result.code === 'invalid_input' ? 400 : result.code === 'busy' ? 503 : 404;
      return answer(res, status, { ok: false, error: { code: result.code, message: result.message } }, result.code === 'busy' ? { 'retry-after': '1' } : {});
    }
    default:
      return assertNever(name, 'sign-in route');
  }
}
