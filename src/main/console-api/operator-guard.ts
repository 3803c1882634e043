import type { AccountQueries } from '../store/accounts.ts';
import type { Operator } from '../../shared/console-workspace.ts';
import type { Caller } from '../../shared/console-roles.ts';
import { ConsoleError } from './console-error.ts';

/** Actions that speak or decide for the business name who did it: the caller's account. */
export function requireOperator(caller: Caller): Operator & { address: string | null } {
  if (!caller.account) {
    throw new ConsoleError('operator_required', 'Set who you are first (an operator id and display name): replies, resolves, stop/resume and suggestions are sent and recorded under that name.');
  }
  return { ...caller.account, address: caller.address };
}

/** The installation's owner (desktop window, console token): an admin, named by the owner account once there is one. */
export function ownerCaller(accounts: Pick<AccountQueries, 'owner'>, address: string | null): Caller {
  const owner = accounts.owner();
  return { role: 'admin', owner: true, account: owner ? { id: owner.id, name: owner.name } : null, address, session: null };
}
