import type { Agent, Role } from '../store/accounts.ts';
import type { StoreContract } from '../store/contract.ts';
import type { InTransaction } from '../store/in-transaction.ts';
import type { AgentPresence, AgentView } from '../../shared/console-accounts.ts';
import { digestOf, newSecret, SESSION_IDLE_MS, SESSION_MAX_MS, SIGN_IN_LINK_MS } from './sessions.ts';

/** Why an account change was refused: the CLI prints the message, the console returns it as data. */
export type AgentAdminRefusal = 'not_found' | 'agent_exists' | 'owner_protected' | 'self_protected';

export class AgentAdminError extends Error {
  readonly code: AgentAdminRefusal;
  constructor(code: AgentAdminRefusal, message: string) {
    super(message);
    this.code = code;
  }
}

/** What the rules read and change of a store. */
export type AgentStore = { readonly accounts: StoreContract['accounts']; readonly audit: Pick<StoreContract['audit'], 'insert'> };

export interface AgentAdminDeps {
  /** Reads outside a change (the views). */
  store: AgentStore;
  now: () => number;
  /** Runs a change and its audit row as one transaction, on the store it hands over. */
  transaction: InTransaction<AgentStore>;
  /** Ends every session of the agent in `tx`; the service also closes their event streams at once (revokeAgent). */
  endSessions: (tx: AgentStore, agentId: string, reason: string) => Promise<number>;
  /** Writes the audit row of a change (action `agent`) in `tx`; `detail` says what changed. */
  audit: (tx: AgentStore, detail: Record<string, unknown>) => Promise<void>;
  /** The team workflow's presence, where the service tracks it. */
  presenceOf?: (agentId: string) => AgentPresence;
}

/** A one-time link just made: the secret exists only here and in what is shown to the admin, once. */
export interface NewLink {
  secret: string;
  expiresAt: number;
}

/** Agents as the admin sees them: their state, last sign-in, live sessions and pending link. */
export async function agentViews(accounts: Pick<StoreContract['accounts'], 'activity'>, agents: Agent[], now: number, presenceOf?: (agentId: string) => AgentPresence): Promise<AgentView[]> {
  const activity = await accounts.activity(now, now - SESSION_IDLE_MS, now - SESSION_MAX_MS);
  return agents.map((a) => {
    const seen = activity.get(a.id);
    return {
      id: a.id,
      name: a.name,
      role: a.role,
      capacity: a.capacity,
      // The owner signs in through the desktop window or the console token: no password needed.
      state: a.disabled ? 'disabled' : a.passwordHash === null && !a.owner ? 'invited' : 'active',
      owner: a.owner,
      presence: presenceOf?.(a.id) ?? 'unknown',
      lastSignInAt: seen?.lastSignInAt ?? null,
      openSessions: seen?.openSessions ?? 0,
      linkExpiresAt: seen?.linkExpiresAt ?? null,
    };
  });
}

/**
 * Adding, changing, disabling, resetting and removing agent accounts: one set of rules for the
 * console's Agents view and `npm run cli -- agents`. The owner (the desktop window and the console
 * token sign in as that account) is never removed, disabled or demoted, so an installation cannot
 * lock its own owner out. `actorId` is the admin making the change: they cannot disable, remove or
 * demote themselves either (another admin, or the owner, can).
 */
export function agentAdmin(deps: AgentAdminDeps) {
  const { store } = deps;

  async function find(accounts: AgentStore['accounts'], id: string): Promise<Agent> {
    const agent = await accounts.get(id);
    if (!agent) throw new AgentAdminError('not_found', `no agent "${id}"`);
    return agent;
  }

  function guard(agent: Agent, what: 'removed' | 'disabled' | 'made an agent', actorId: string | null): void {
    if (agent.owner) throw new AgentAdminError('owner_protected', `${agent.id} is this installation's owner and cannot be ${what} (the desktop window and the console token sign in as this account)`);
    const own = { removed: 'remove', disabled: 'disable', 'made an agent': 'demote' }[what];
    if (actorId !== null && agent.id === actorId) throw new AgentAdminError('self_protected', `you cannot ${own} your own account: ask another admin`);
  }

  async function newLink(tx: AgentStore, agentId: string): Promise<NewLink> {
    const secret = newSecret();
    const now = deps.now();
    const expiresAt = now + SIGN_IN_LINK_MS;
    await tx.accounts.replaceSignInLink(agentId, digestOf(secret), expiresAt, now);
    return { secret, expiresAt };
  }

  const view = async (id: string): Promise<AgentView> => (await agentViews(store.accounts, [await find(store.accounts, id)], deps.now(), deps.presenceOf))[0]!;

  return {
    list: async (): Promise<AgentView[]> => agentViews(store.accounts, await store.accounts.list(), deps.now(), deps.presenceOf),
    view,

    async add(input: { id: string; name: string; role: Role; capacity: number }): Promise<{ agent: AgentView; link: NewLink }> {
      const link = await deps.transaction(async (tx) => {
        // Ids differing only in case would sign in and be mentioned as two people who look like one.
        const clash = (await tx.accounts.list()).find((a) => a.id.toLowerCase() === input.id.toLowerCase());
        if (clash) throw new AgentAdminError('agent_exists', `an agent "${clash.id}" already exists`);
        await tx.accounts.add({ ...input, now: deps.now() });
        await deps.audit(tx, { change: 'add', agent: input.id, name: input.name, role: input.role, capacity: input.capacity });
        return newLink(tx, input.id);
      });
      return { agent: await view(input.id), link };
    },

    async update(id: string, changes: { name?: string; role?: Role; capacity?: number }, actorId: string | null = null): Promise<AgentView> {
      await deps.transaction(async (tx) => {
        const agent = await find(tx.accounts, id);
        const changed: Record<string, unknown> = {};
        const now = deps.now();
        if (changes.role !== undefined && changes.role !== agent.role) {
          if (changes.role === 'agent') guard(agent, 'made an agent', actorId);
          await tx.accounts.setRole(id, changes.role, now);
          changed['role'] = { from: agent.role, to: changes.role };
        }
        if (changes.name !== undefined && changes.name !== agent.name) {
          await tx.accounts.rename(id, changes.name, now);
          changed['name'] = { from: agent.name, to: changes.name };
        }
        if (changes.capacity !== undefined && changes.capacity !== agent.capacity) {
          await tx.accounts.setCapacity(id, changes.capacity, now);
          changed['capacity'] = { from: agent.capacity, to: changes.capacity };
        }
        if (Object.keys(changed).length) await deps.audit(tx, { change: 'update', agent: id, ...changed });
      });
      return view(id);
    },

    async setDisabled(id: string, disabled: boolean, actorId: string | null = null): Promise<{ agent: AgentView; endedSessions: number }> {
      const endedSessions = await deps.transaction(async (tx) => {
        const agent = await find(tx.accounts, id);
        if (disabled) guard(agent, 'disabled', actorId);
        if (agent.disabled === disabled) return 0;
        await tx.accounts.setDisabled(id, disabled, deps.now());
        if (disabled) await tx.accounts.dropSignInLinks(id);
        const ended = disabled ? await deps.endSessions(tx, id, 'disabled') : 0;
        await deps.audit(tx, { change: disabled ? 'disable' : 'enable', agent: id, ...(disabled ? { endedSessions: ended } : {}) });
        return ended;
      });
      return { agent: await view(id), endedSessions };
    },

    /** The password is forgotten and every session ends; the new link is where the agent chooses another. */
    async reset(id: string, byOwner = true): Promise<{ agent: AgentView; link: NewLink; endedSessions: number }> {
      const done = await deps.transaction(async (tx) => {
        const agent = await find(tx.accounts, id);
        // The owner's link would give its holder a password sign-in as the owner, whom no admin can
        // disable: only the owner (desktop, console token, CLI on the data folder) may make one.
        if (agent.owner && !byOwner) throw new AgentAdminError('owner_protected', `${agent.id} is this installation's owner: only the owner (the desktop window, the console token or the CLI) can reset it`);
        await tx.accounts.clearPassword(id, deps.now());
        const endedSessions = await deps.endSessions(tx, id, 'reset');
        await deps.audit(tx, { change: 'reset', agent: id, endedSessions });
        return { link: await newLink(tx, id), endedSessions };
      });
      return { agent: await view(id), ...done };
    },

    /** Sessions end first (their streams close), then the account goes with its links and sessions. */
    async remove(id: string, actorId: string | null = null): Promise<{ removed: string; endedSessions: number }> {
      return deps.transaction(async (tx) => {
        const agent = await find(tx.accounts, id);
        guard(agent, 'removed', actorId);
        const endedSessions = await deps.endSessions(tx, id, 'removed');
        await tx.accounts.remove(id);
        await deps.audit(tx, { change: 'remove', agent: id, name: agent.name, endedSessions });
        return { removed: id, endedSessions };
      });
    },
  };
}

export type AgentAdmin = ReturnType<typeof agentAdmin>;
