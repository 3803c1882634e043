import type { StoreContract } from '../store/contract.ts';
import type { NewAudit } from '../store/audit.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Caller } from '../../shared/console-roles.ts';
import type { SignedIn, SignInOutputs } from '../../shared/sign-in-api.ts';
import { ownerCallerOf } from '../console-api/operator-guard.ts';
import { checkSession, digestOf, newSecret } from './sessions.ts';
import { hashPassword, passwordProblem, verifyPassword } from './passwords.ts';
import { createSignInThrottle, type SignInThrottle } from './sign-in-throttle.ts';
import { createHashGate, HashBusy, type HashGate } from './hash-gate.ts';

/** What sign-in, sessions and revocation read and write. */
export type ConsoleAccountStore = Pick<
  StoreContract['accounts'],
  'get' | 'owner' | 'session' | 'endSession' | 'touchSession' | 'addSession' | 'peekSignInLink' | 'takeSignInLink' | 'setPasswordHash' | 'endSessionsOf'
>;

export interface ConsoleAccountsDeps {
  accounts: ConsoleAccountStore;
  clock: Clock;
  /** Whether a bearer token is the installation's console token (the owner's, see console-token.ts). */
  verifyToken: (token: string) => boolean;
  /** Records a sign-in, failed sign-in or sign-out (through the writer, like every audit row). */
  audit: (entry: NewAudit) => void;
  throttle?: SignInThrottle;
  /** How many password hashes run at once (hash-gate.ts). */
  hashGate?: HashGate;
  /**
   * How long a session's check is trusted before the database is asked again: the database is the
   * truth (the CLI is another process; on PostgreSQL, another node may end a session), so a
   * session ended elsewhere is refused here within this bound (default 1 s).
   */
  recheckMs?: number;
}

/** Why a sign-in was refused: the same `failed` for an unknown account as for a wrong password. */
export type SignInRefusal =
  | { code: 'sign_in_failed'; status: 401 }
  | { code: 'too_many_attempts'; status: 429; retryAfterSeconds: number }
  | { code: 'busy'; status: 503; retryAfterSeconds: number };
export type SignInResult = { ok: true; value: SignedIn } | { ok: false; error: SignInRefusal };

/** Hashed once: an unknown account still costs one scrypt, so timing does not tell it from a wrong password. */
let decoyHash: Promise<string> | null = null;
const decoy = (): Promise<string> => (decoyHash ??= hashPassword('switchboard decoy password, never a real one'));

/**
 * Who is calling the console, from the bearer token an HTTP request carries: the console token is
 * the owner; a session token is its agent while the session lives. Sign-in, the one-time link,
 * sign-out and revocation (a disabled, reset or removed agent) live here too, so that an open
 * event stream asks the same place whether its token still counts.
 */
export function createConsoleAccounts(deps: ConsoleAccountsDeps) {
  const { accounts, clock } = deps;
  const throttle = deps.throttle ?? createSignInThrottle();
  const hashGate = deps.hashGate ?? createHashGate();
  const recheckMs = deps.recheckMs ?? 1000;
  // A session's check, trusted for recheckMs: an event stream re-asks every second, a console
  // calls several methods at once; neither should read the database each time.
  const checked = new Map<string, { at: number; caller: Caller | null }>();
  const revokedListeners = new Set<(digests: ReadonlySet<string>) => void>();
  // The owner account as last read (each console-token call reads it): what an owner's open event
  // stream is filtered by between its checks, as events are delivered synchronously.
  let owner: { id: string; name: string } | null = null;
  const ownerNow = async (address: string | null): Promise<Caller> => {
    const found = await accounts.owner();
    owner = found && { id: found.id, name: found.name };
    return ownerCallerOf(owner, address);
  };

  async function sessionCaller(token: string, address: string | null): Promise<Caller | null> {
    const digest = digestOf(token);
    const now = clock.now();
    const known = checked.get(digest);
    if (known && now - known.at < recheckMs) return known.caller ? { ...known.caller, address } : null;
    const result = await checkSession(accounts, token, now);
    const caller: Caller | null = result.ok
      ? { role: result.agent.role, owner: result.agent.owner, account: { id: result.agent.id, name: result.agent.name }, address, session: digest }
      : null;
    checked.set(digest, { at: now, caller });
    if (checked.size > 10_000) checked.delete(checked.keys().next().value!);
    return caller;
  }

  async function startSession(agent: { id: string; name: string; role: 'admin' | 'agent' }, address: string | null): Promise<SignedIn> {
    const token = newSecret();
    await accounts.addSession({ digest: digestOf(token), agentId: agent.id, address, now: clock.now() });
    return { token, account: { id: agent.id, name: agent.name, role: agent.role } };
  }

  function audit(action: 'sign_in' | 'sign_in_failed' | 'sign_out', who: { id: string; name: string } | null, address: string | null, detail: Record<string, unknown> | null): void {
    deps.audit({ at: clock.now(), operator: who, action, conversationId: null, detail: detail ? JSON.stringify(detail) : null, address });
  }

  function revoke(digests: Iterable<string>): void {
    const set = new Set(digests);
    if (!set.size) return;
    for (const d of set) checked.delete(d);
    for (const l of revokedListeners) l(set);
  }

  return {
    /** The caller a bearer token stands for, or null (refused). */
    async callerOf(token: string, address: string | null): Promise<Caller | null> {
      if (token.length > 256) return null;
      if (deps.verifyToken(token)) return ownerNow(address);
      return sessionCaller(token, address);
    },

    /** The owner as last read (by callerOf or refreshOwner), for what must answer at once (an event's recipients). */
    ownerCaller: (address: string | null): Caller => ownerCallerOf(owner, address),

    /** Reads the owner account again (the owner chose or changed their id or name). */
    async refreshOwner(): Promise<void> {
      await ownerNow(null);
    },

    async signIn(input: { id: string; password: string }, address: string): Promise<SignInResult> {
      const now = clock.now();
      const limited = throttle.check(input.id, address, now);
      if (!limited.allowed) {
        audit('sign_in_failed', null, address, { id: input.id.slice(0, 64), reason: `too many attempts (per ${limited.by})` });
        return { ok: false, error: { code: 'too_many_attempts', status: 429, retryAfterSeconds: limited.retryAfterSeconds } };
      }
      // Counted before the hash: attempts sent in parallel all pass `check` before any ends.
      throttle.fail(input.id, address, now);
      const agent = await accounts.get(input.id);
      const hash = agent?.passwordHash ?? null;
      let matches: boolean;
      try {
        const stored = hash ?? (await decoy());
        matches = await hashGate.run(() => verifyPassword(stored, input.password));
      } catch (error) {
        if (!(error instanceof HashBusy)) throw error;
        throttle.takeBack(input.id, address, now);
        return { ok: false, error: { code: 'busy', status: 503, retryAfterSeconds: 1 } };
      }
      if (!agent || !hash || agent.disabled || !matches) {
        // The reason stays in the audit, for the admin; the answer is the same whatever it was.
        const reason = !agent ? 'unknown account' : agent.disabled ? 'account disabled' : !hash ? 'no password chosen yet' : 'wrong password';
        audit('sign_in_failed', agent ? { id: agent.id, name: agent.name } : null, address, { id: input.id.slice(0, 64), reason });
        return { ok: false, error: { code: 'sign_in_failed', status: 401 } };
      }
      throttle.succeed(input.id, address, now);
      audit('sign_in', { id: agent.id, name: agent.name }, address, null);
      return { ok: true, value: await startSession(agent, address) };
    },

    async linkInfo(link: string): Promise<SignInOutputs['linkInfo'] | null> {
      const found = await accounts.peekSignInLink(digestOf(link), clock.now());
      const agent = found ? await accounts.get(found.agentId) : null;
      if (!found || !agent || agent.disabled) return null;
      return { id: agent.id, name: agent.name, expiresAt: found.expiresAt };
    },

    /** The agent chooses a password through their link: it is used up, and they are signed in. */
    async usePasswordLink(input: { link: string; password: string }, address: string): Promise<{ ok: true; value: SignedIn } | { ok: false; code: 'invalid_input' | 'link_not_valid' | 'busy'; message: string }> {
      const problem = passwordProblem(input.password);
      if (problem) return { ok: false, code: 'invalid_input', message: problem };
      const digest = digestOf(input.link);
      const found = await accounts.peekSignInLink(digest, clock.now());
      const agent = found ? await accounts.get(found.agentId) : null;
      if (!found || !agent || agent.disabled) return { ok: false, code: 'link_not_valid', message: 'this sign-in link is used, expired or replaced: ask an admin for a new one' };
      let hash: string;
      try {
        hash = await hashGate.run(() => hashPassword(input.password));
      } catch (error) {
        if (!(error instanceof HashBusy)) throw error;
        return { ok: false, code: 'busy', message: 'too many sign-ins at once: try again in a second' };
      }
      // Taken only now (hashing took a while): a second use of the link meanwhile finds it gone.
      if ((await accounts.takeSignInLink(digest, clock.now())) !== agent.id) return { ok: false, code: 'link_not_valid', message: 'this sign-in link was just used: sign in with your password' };
      await accounts.setPasswordHash(agent.id, hash, clock.now());
      throttle.succeed(agent.id);
      audit('sign_in', { id: agent.id, name: agent.name }, address, { via: 'sign-in link, password chosen' });
      return { ok: true, value: await startSession(agent, address) };
    },

    /** Ends the caller's own session; its event streams close. */
    async signOut(caller: Caller): Promise<boolean> {
      if (!caller.session) return false;
      const ended = await accounts.endSession(caller.session, 'signed_out', clock.now());
      audit('sign_out', caller.account, caller.address, null);
      revoke([caller.session]);
      return ended;
    },

    /**
     * Ends every session of an agent (disabled, reset, removed) at once: calls refused, streams
     * closed. `tx`: the accounts of the transaction the change runs in (the rows end with it).
     */
    async revokeAgent(agentId: string, reason: string, tx: Pick<StoreContract['accounts'], 'endSessionsOf'> = accounts): Promise<number> {
      const digests = await tx.endSessionsOf(agentId, reason, clock.now());
      revoke(digests);
      return digests.length;
    },

    /** Sessions ended by this process: an open event stream of one of them closes before its next event. */
    onRevoked(listener: (digests: ReadonlySet<string>) => void): () => void {
      revokedListeners.add(listener);
      return () => void revokedListeners.delete(listener);
    },
  };
}

export type ConsoleAccounts = ReturnType<typeof createConsoleAccounts>;
