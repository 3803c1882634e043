import { createHash, randomBytes } from 'node:crypto';
import type { Agent, SessionRow } from '../store/accounts.ts';
import type { StoreContract } from '../store/contract.ts';

/** What a session check reads and writes. */
export type SessionAccounts = Pick<StoreContract['accounts'], 'session' | 'get' | 'endSession' | 'touchSession'>;

/** Protocol v1.2, team mode: a session ends after 12 h without use, and 30 days after sign-in whatever its use. */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
export const SESSION_MAX_MS = 30 * 24 * 60 * 60 * 1000;
/** A sign-in link works once, for 24 h. */
export const SIGN_IN_LINK_MS = 24 * 60 * 60 * 1000;

/** A bearer secret (session token, sign-in link): 32 random bytes, base64url. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** What is stored of a secret: its SHA-256. The secrets are random, so no salt or slow hash is needed. */
export function digestOf(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export type SessionRefusal = 'unknown' | 'ended' | 'idle' | 'expired' | 'disabled';
export type SessionCheck = { ok: true; agent: Agent; session: SessionRow } | { ok: false; reason: SessionRefusal };

/** Whether `token` is a live session of an enabled agent at `now`; one found expired is ended, with why. */
export async function checkSession(accounts: SessionAccounts, token: string, now: number): Promise<SessionCheck> {
  const digest = digestOf(token);
  const session = await accounts.session(digest);
  if (!session) return { ok: false, reason: 'unknown' };
  if (session.endedAt !== null) return { ok: false, reason: 'ended' };
  const end = async (reason: SessionRefusal): Promise<SessionCheck> => {
    await accounts.endSession(digest, reason, now);
    return { ok: false, reason };
  };
  const agent = await accounts.get(session.agentId);
  if (!agent || agent.disabled) return end('disabled');
  if (now - session.createdAt >= SESSION_MAX_MS) return end('expired');
  if (now - session.lastSeenAt >= SESSION_IDLE_MS) return end('idle');
  // Use is recorded once a minute: the UPDATE takes SQLite's write lock even when it changes no
  // row, and each open event stream checks its session every second (bench/team: 50 streams made
  // 50 main-thread write attempts a second waiting on the writer thread; one ran out of busy time,
  // and its throw from the stream's timer ended serve).
  if (now - session.lastSeenAt >= 60_000) await accounts.touchSession(digest, now);
  return { ok: true, agent, session };
}
