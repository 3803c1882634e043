import type { AccountQueries, Agent, Role } from '../store/accounts.ts';
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

export interface AgentAdminDeps {
  accounts: AccountQueries;
  now: () => number;
  /** Runs a change and its audit row as one transaction. */
  transaction: <T>(fn: () => T) => T;
  /** Ends every session of the agent; the service also closes their event streams at once (revokeAgent). */
  endSessions: (agentId: string, reason: string) => number;
  /** Writes the audit row of a change (action `agent`); `detail` says what changed. */
  audit: (detail: Record<string, unknown>) => void;
  /** The team workflow's presence, where the service tracks it. */
  presenceOf?: (agentId: string) => AgentPresence;
}

/** A one-time link just made: the secret exists only here and in what is shown to the admin, once. */
export interface NewLink {
  secret: string;
  expiresAt: number;
}

/** Agents as the admin sees them: their state, last sign-in, live sessions and pending link. */
export function agentViews(accounts: AccountQueries, agents: Agent[], now: number, presenceOf?: (agentId: string) => AgentPresence): AgentView[] {
  const activity = accounts.activity(now, now - SESSION_IDLE_MS, now - SESSION_MAX_MS);
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
  const { accounts } = deps;

  function find(id: string): Agent {
    const agent = accounts.get(id);
    if (!agent) throw new AgentAdminError('not_found', `no agent "${id}"`);
    return agent;
  }

  function guard(agent: Agent, what: 'removed' | 'disabled' | 'made an agent', actorId: string | null): void {
    if (agent.owner) throw new AgentAdminError('owner_protected', `${agent.id} is this installation's owner and cannot be ${what} (the desktop window and the console token sign in as this account)`);
    const own = { removed: 'remove', disabled: 'disable', 'made an agent': 'demote' }[what];
    if (actorId !== null && agent.id === actorId) throw new AgentAdminError('self_protected', `you cannot ${own} your own account: ask another admin`);
  }

  function newLink(agentId: string): NewLink {
    const secret = newSecret();
    const now = deps.now();
    const expiresAt = now + SIGN_IN_LINK_MS;
    accounts.replaceSignInLink(agentId, digestOf(secret), expiresAt, now);
    return { secret, expiresAt };
  }

  const view = (id: string): AgentView => agentViews(accounts, [find(id)], deps.now(), deps.presenceOf)[0]!;

  return {
    list: (): AgentView[] => agentViews(accounts, accounts.list(), deps.now(), deps.presenceOf),
    view,

    add(input: { id: string; name: string; role: Role; capacity: number }): { agent: AgentView; link: NewLink } {
      const link = deps.transaction(() => {
        // Ids differing only in case would sign in and be mentioned as two people who look like one.
        const clash = accounts.list().find((a) => a.id.toLowerCase() === input.id.toLowerCase());
        if (clash) throw new AgentAdminError('agent_exists', `an agent "${clash.id}" already exists`);
        accounts.add({ ...input, now: deps.now() });
        deps.audit({ change: 'add', agent: input.id, name: input.name, role: input.role, capacity: input.capacity });
        return newLink(input.id);
      });
      return { agent: view(input.id), link };
    },

    update(id: string, changes: { name?: string; role?: Role; capacity?: number }, actorId: string | null = null): AgentView {
      deps.transaction(() => {
        const agent = find(id);
        const changed: Record<string, unknown> = {};
        const now = deps.now();
        if (changes.role !== undefined && changes.role !== agent.role) {
          if (changes.role === 'agent') guard(agent, 'made an agent', actorId);
          accounts.setRole(id, changes.role, now);
          changed['role'] = { from: agent.role, to: changes.role };
        }
        if (changes.name !== undefined && changes.name !== agent.name) {
          accounts.rename(id, changes.name, now);
          changed['name'] = { from: agent.name, to: changes.name };
        }
        if (changes.capacity !== undefined && changes.capacity !== agent.capacity) {
          accounts.setCapacity(id, changes.capacity, now);
          changed['capacity'] = { from: agent.capacity, to: changes.capacity };
        }
        if (Object.keys(changed).length) deps.audit({ change: 'update', agent: id, ...changed });
      });
      return view(id);
    },

    setDisabled(id: string, disabled: boolean, actorId: string | null = null): { agent: AgentView; endedSessions: number } {
      const endedSessions = deps.transaction(() => {
        const agent = find(id);
        if (disabled) guard(agent, 'disabled', actorId);
        if (agent.disabled === disabled) return 0;
        accounts.setDisabled(id, disabled, deps.now());
        if (disabled) accounts.dropSignInLinks(id);
        const ended = disabled ? deps.endSessions(id, 'disabled') : 0;
        deps.audit({ change: disabled ? 'disable' : 'enable', agent: id, ...(disabled ? { endedSessions: ended } : {}) });
        return ended;
      });
      return { agent: view(id), endedSessions };
    },

    /** The password is forgotten and every session ends; the new link is where the agent chooses another. */
    reset(id: string, byOwner = true): { agent: AgentView; link: NewLink; endedSessions: number } {
      const done = deps.transaction(() => {
        const agent = find(id);
        // The owner's link would give its holder a password sign-in as the owner, whom no admin can
        // disable: only the owner (desktop, console token, CLI on the data folder) may make one.
        if (agent.owner && !byOwner) throw new AgentAdminError('owner_protected', `${agent.id} is this installation's owner: only the owner (the desktop window, the console token or the CLI) can reset it`);
        accounts.clearPassword(id, deps.now());
        const endedSessions = deps.endSessions(id, 'reset');
        deps.audit({ change: 'reset', agent: id, endedSessions });
        return { link: newLink(id), endedSessions };
      });
      return { agent: view(id), ...done };
    },

    /** Sessions end first (their streams close), then the account goes with its links and sessions. */
    remove(id: string, actorId: string | null = null): { removed: string; endedSessions: number } {
      return deps.transaction(() => {
        const agent = find(id);
        guard(agent, 'removed', actorId);
        const endedSessions = deps.endSessions(id, 'removed');
        accounts.remove(id);
        deps.audit({ change: 'remove', agent: id, name: agent.name, endedSessions });
        return { removed: id, endedSessions };
      });
    },
  };
}

export type AgentAdmin = ReturnType<typeof agentAdmin>;
