import type { ConsoleHandlers } from '../../shared/console-api.ts';
import type { ConsoleAccounts } from '../accounts/console-accounts.ts';

export interface AccountHandlerDeps {
  consoleAccounts: ConsoleAccounts;
}

type AccountMethods = 'whoAmI' | 'signOut';

/** Team mode: who the caller is, and their sign-out. */
export function createAccountHandlers(deps: AccountHandlerDeps): Pick<ConsoleHandlers, AccountMethods> {
  return {
    async whoAmI(_input, caller) {
      return { account: caller.account, role: caller.role, owner: caller.owner };
    },
    async signOut(_input, caller) {
      return { signedOut: deps.consoleAccounts.signOut(caller) };
    },
  };
}
