import type { StoreContract } from '../store/contract.ts';
import type { Reader } from '../store/team.ts';
import type { Caller } from '../../shared/console-roles.ts';

/**
 * Whose read marker, Mine and Needs you a call reads: the caller's account. An agent's unread
 * counts start when their account was made (a new colleague does not inherit a year of history as
 * unread); the owner's count from the start, as the one marker before team mode was theirs. Null: a
 * console with no account yet (the shared marker, everyone's queue).
 */
export async function readerOf(accounts: Pick<StoreContract['accounts'], 'get'>, caller: Caller): Promise<Reader | null> {
  if (!caller.account) return null;
  const agent = await accounts.get(caller.account.id);
  return { id: caller.account.id, floor: !agent || agent.owner ? 0 : agent.createdAt };
}
