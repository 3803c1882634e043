import type { ConsoleHandlers } from '../../shared/console-api.ts';
import type { AgentPresence } from '../../shared/console-accounts.ts';
import type { Caller } from '../../shared/console-roles.ts';
import type { InTransaction } from '../store/in-transaction.ts';
import type { Clock } from '../../shared/clock.ts';
import type { ConsoleAccounts } from '../accounts/console-accounts.ts';
import { agentAdmin, AgentAdminError, agentViews, type AgentAdmin, type AgentStore } from '../accounts/agent-admin.ts';
import { signInLinkView } from '../accounts/console-origin.ts';
import { ConsoleError } from './console-error.ts';
import { requireOperator } from './operator-guard.ts';

export interface AccountHandlerDeps {
  store: AgentStore;
  /** An account change and its audit row as one transaction. */
  inTransaction: InTransaction<AgentStore>;
  clock: Clock;
  consoleAccounts: ConsoleAccounts;
  /**
   * The console's address as others open it (`npm run serve`), for the sign-in links it makes;
   * null in the desktop app, whose console nobody else can reach.
   */
  consoleOrigin?: () => string | null;
  /** The team workflow: a disabled agent's conversations go back to the queue at once. */
  team?: { disabled(agentId: string): Promise<void> };
  /** The team workflow's presence of an agent, where it is tracked. */
  presenceOf?: (agentId: string) => AgentPresence;
}

type AccountMethods = 'whoAmI' | 'signOut' | 'listAgents' | 'addAgent' | 'updateAgent' | 'setAgentDisabled' | 'resetAgent' | 'removeAgent';

/** Team mode: who the caller is, their sign-out, and the admin's agent accounts (the same rules as `npm run cli -- agents`). */
export function createAccountHandlers(deps: AccountHandlerDeps): Pick<ConsoleHandlers, AccountMethods> {
  const { store, clock, consoleAccounts } = deps;
  const origin = (): string | null => deps.consoleOrigin?.() ?? null;

  /** The rules with this caller as the actor: the audit names them and where they called from. */
  function adminFor(caller: Caller): { admin: AgentAdmin; actorId: string } {
    const operator = requireOperator(caller);
    const admin = agentAdmin({
      store,
      now: () => clock.now(),
      transaction: deps.inTransaction,
      // Their open consoles lose access now: calls refused, event streams closed.
      endSessions: (tx, id, reason) => consoleAccounts.revokeAgent(id, reason, tx.accounts),
      audit: async (tx, detail) => {
        await tx.audit.insert({ at: clock.now(), operator, action: 'agent', conversationId: null, detail: JSON.stringify({ ...detail, via: 'console' }) });
      },
      presenceOf: deps.presenceOf,
    });
    return { admin, actorId: operator.id };
  }

  /** Refusals of the rules become console errors; anything else is a failure to log. */
  async function run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof AgentAdminError) throw new ConsoleError(error.code, error.message);
      throw error;
    }
  }

  return {
    async whoAmI(_input, caller) {
      return { account: caller.account, role: caller.role, owner: caller.owner };
    },
    async signOut(_input, caller) {
      return { signedOut: await consoleAccounts.signOut(caller) };
    },
    async listAgents() {
      return agentViews(store.accounts, await store.accounts.list(), clock.now(), deps.presenceOf);
    },
    async addAgent(input, caller) {
      const { admin } = adminFor(caller);
      const { agent, link } = await run(() => admin.add(input));
      return { agent, link: signInLinkView(origin(), link.secret, link.expiresAt) };
    },
    async updateAgent(input, caller) {
      const { admin, actorId } = adminFor(caller);
      return run(() => admin.update(input.id, { name: input.name, role: input.role, capacity: input.capacity }, actorId));
    },
    async setAgentDisabled(input, caller) {
      const { admin, actorId } = adminFor(caller);
      const done = await run(() => admin.setDisabled(input.id, input.disabled, actorId));
      if (input.disabled) await deps.team?.disabled(input.id);
      return done;
    },
    async resetAgent(input, caller) {
      const { admin } = adminFor(caller);
      const { agent, link, endedSessions } = await run(() => admin.reset(input.id, caller.owner));
      return { agent, link: signInLinkView(origin(), link.secret, link.expiresAt), endedSessions };
    },
    async removeAgent(input, caller) {
      const { admin, actorId } = adminFor(caller);
      return run(() => admin.remove(input.id, actorId));
    },
  };
}
