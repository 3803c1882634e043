import type { StoreContract } from '../store/contract.ts';
import type { Agent } from '../store/accounts.ts';
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

/** The owner caller for the owner account as read (null: none yet). */
export function ownerCallerOf(owner: Pick<Agent, 'id' | 'name'> | null, address: string | null): Caller {
  return { role: 'admin', owner: true, account: owner ? { id: owner.id, name: owner.name } : null, address, session: null };
}

/** The installation's owner (desktop window, console token): an admin, named by the owner account once there is one. */
export async function ownerCaller(accounts: Pick<StoreContract['accounts'], 'owner'>, address: string | null): Promise<Caller> {
  return ownerCallerOf(await accounts.owner(), address);
}
