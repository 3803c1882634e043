import { z } from 'zod';
import { ROLES, type Role } from './console-roles.ts';

/**
 * Team mode's admin methods for agent accounts (protocol v1.2, section 9): the console's Agents
 * view and `npm run cli -- agents` do the same things, with the same rules. Spread into
 * consoleInputs and ConsoleOutputs (src/shared/console-api.ts); every method is an admin's.
 */

/**
 * A new account's id: what the agent types to sign in and what `@id` in a note names, so letters,
 * digits, `.`, `_` and `-`, starting with a letter or digit. (The owner's id, chosen before team
 * mode, may be anything its form allowed.)
 */
export const AGENT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const AGENT_ID_RULE = '1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit';
export const AGENT_NAME_MAX = 100;
export const AGENT_CAPACITY_MAX = 1000;
export const DEFAULT_CAPACITY = 5;

const existingId = z.string().trim().min(1, 'give an account id').max(64);
const newId = z.string().trim().regex(AGENT_ID, `id: ${AGENT_ID_RULE}`);
const name = z.string().trim().min(1, 'give a display name').max(AGENT_NAME_MAX);
/** Conversations auto-assignment gives the agent at most at once. */
const capacity = z.number().int().min(0).max(AGENT_CAPACITY_MAX);

export const accountInputs = {
  listAgents: z.object({}),
  /** A new account, without a password: the answer's one-time link is where the agent chooses one. */
  addAgent: z.object({ id: newId, name, role: z.enum(ROLES).default('agent'), capacity: capacity.default(DEFAULT_CAPACITY) }),
  /** Changes only what is given. The owner stays an admin. */
  updateAgent: z
    .object({ id: existingId, name: name.optional(), role: z.enum(ROLES).optional(), capacity: capacity.optional() })
    .refine((u) => u.name !== undefined || u.role !== undefined || u.capacity !== undefined, { message: 'give a name, role or capacity to change' }),
  /** Disabling ends the agent's sessions at once (their open consoles lose access); the owner cannot be disabled. */
  setAgentDisabled: z.object({ id: existingId, disabled: z.boolean() }),
  /** Forgets the password, ends every session, and makes a new one-time link. */
  resetAgent: z.object({ id: existingId }),
  /** Ends every session and removes the account; its past replies and audit rows keep its name. The owner cannot be removed. */
  removeAgent: z.object({ id: existingId }),
} as const;

/** active: has a password; invited: has not chosen one yet (a link is out, or has expired); disabled: refused whatever it has. */
export const AGENT_STATES = ['active', 'invited', 'disabled'] as const;
export type AgentState = (typeof AGENT_STATES)[number];

/** Who is online comes from the team workflow's presence; `unknown` where this service does not track it. */
export type AgentPresence = 'online' | 'away' | 'offline' | 'unknown';

export interface AgentView {
  id: string;
  name: string;
  role: Role;
  capacity: number;
  state: AgentState;
  /** The installation's owner: never removed, disabled or demoted. */
  owner: boolean;
  presence: AgentPresence;
  /** The newest session's start (sign-in or link used); null if never signed in. */
  lastSignInAt: number | null;
  /** Sessions not ended (each an open or recently used console). */
  openSessions: number;
  /** When the agent's pending sign-in link expires (null: none out, or it has expired). */
  linkExpiresAt: number | null;
}

/**
 * A one-time sign-in link (24 h). `url` is the console's address with `#sign-in-link=<secret>`;
 * null when this service has no console address others can open (the desktop app): the link then
 * works only on a team server (`npm run serve`), appended to its console address as `fragment`.
 */
export interface SignInLinkView {
  url: string | null;
  fragment: string;
  expiresAt: number;
}

export interface AccountOutputs {
  listAgents: AgentView[];
  addAgent: { agent: AgentView; link: SignInLinkView };
  updateAgent: AgentView;
  /** `endedSessions`: the sessions disabling ended (0 when enabling). */
  setAgentDisabled: { agent: AgentView; endedSessions: number };
  resetAgent: { agent: AgentView; link: SignInLinkView; endedSessions: number };
  removeAgent: { removed: string; endedSessions: number };
}
