import type { StoreTarget } from './store-target.ts';
import type { Role } from '../store/accounts.ts';
import { agentAdmin, AgentAdminError, type AgentAdmin } from '../accounts/agent-admin.ts';
import { signInLinkView } from '../accounts/console-origin.ts';
import { AGENT_CAPACITY_MAX, AGENT_ID, AGENT_ID_RULE, AGENT_NAME_MAX, DEFAULT_CAPACITY, type AgentView } from '../../shared/console-accounts.ts';
import { UsageError } from './args.ts';

export interface AgentFlags {
  name?: string;
  role?: string;
  capacity?: string;
  origin?: string;
}

export const AGENTS_USAGE = `  agents add ID --name NAME [--role admin|agent] [--capacity N] [--origin URL]
       (prints a one-time sign-in link, valid 24 h, where the agent chooses a password)
  agents list
  agents disable ID | agents enable ID
  agents reset ID [--origin URL]   (forgets the password, ends their sessions, prints a new link)
  agents remove ID                 (ends their sessions; the owner is never removed, disabled or demoted)`;

const ACTIONS = 'add, list, disable, enable, reset or remove';

function requireId(id: string | undefined, action: string): string {
  if (!id) throw new UsageError(`agents ${action} needs an agent ID`);
  return id;
}

function roleOf(value: string | undefined): Role | undefined {
  if (value === undefined) return undefined;
  if (value !== 'admin' && value !== 'agent') throw new UsageError(`--role must be admin or agent, got "${value}"`);
  return value;
}

function capacityOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > AGENT_CAPACITY_MAX) throw new UsageError(`--capacity must be a whole number 0..${AGENT_CAPACITY_MAX}, got "${value}"`);
  return n;
}

function nameOf(value: string | undefined): string {
  const name = value?.trim();
  if (!name) throw new UsageError('agents add needs --name NAME (the name colleagues and customers see)');
  if (name.length > AGENT_NAME_MAX) throw new UsageError(`--name must be at most ${AGENT_NAME_MAX} characters`);
  return name;
}

/** `--origin URL` wins; else the console's address from the config (its port, or its public origin). */
export function linkOrigin(flag: string | undefined, configured: string | null): string | null {
  if (flag === undefined) return configured;
  let url: URL | null = null;
  try {
    url = new URL(flag);
  } catch {
    // said below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new UsageError(`--origin must be an http:// or https:// URL (the console's address as agents open it), got "${flag}"`);
  return url.origin;
}

function linkLines(origin: string | null, secret: string, expiresAt: number): string[] {
  const link = signInLinkView(origin, secret, expiresAt);
  return [
    `sign-in link: ${link.url ?? `<console address>/${link.fragment}`}`,
    `It works once, until ${new Date(expiresAt).toISOString()} (24 h): the agent opens it and chooses a password. It is shown only now; "agents reset" makes a new one.`,
    ...(link.url ? [] : ['Put the console address that serve printed (without its #token=…) in front of the fragment, or give --origin URL.']),
  ];
}

const when = (ms: number | null): string => (ms === null ? '-' : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z'));

function table(agents: AgentView[]): string {
  if (agents.length === 0) return 'no agents yet: add one with "npm run cli -- agents add ID --name NAME"';
  const rows = agents.map((a) => [a.id, a.name, a.owner ? `${a.role} (owner)` : a.role, String(a.capacity), a.state, when(a.lastSignInAt), String(a.openSessions)]);
  const header = ['ID', 'NAME', 'ROLE', 'CAPACITY', 'STATE', 'LAST_SIGN_IN', 'SESSIONS'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

/** A refusal of the rules (no such agent, the owner) is the operator's to fix: a usage error with its message. */
async function run<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof AgentAdminError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * `agents add|list|disable|enable|reset|remove`: team mode's accounts from the terminal, with the
 * console's rules (src/main/accounts/agent-admin.ts). Each change is audited as action `agent`
 * with no operator and `via: "cli"`. A running server sees the change within a second: its
 * sessions are checked against the database that often, so a disabled agent's open console loses
 * access then. The same on PostgreSQL: every node checks its sessions against the database.
 */
export async function agentsCommand({ store, transaction }: StoreTarget, now: number, args: string[], flags: AgentFlags, configuredOrigin: string | null): Promise<string> {
  const [action, idArg, extra] = args;
  if (extra !== undefined) throw new UsageError(`agents ${action ?? ''} takes one ID, got also "${extra}" (quote a name with spaces: --name "Ann Lee")`);
  const admin: AgentAdmin = agentAdmin({
    store,
    now: () => now,
    transaction,
    endSessions: async (tx, id, reason) => (await tx.accounts.endSessionsOf(id, reason, now)).length,
    audit: async (tx, detail) => {
      await tx.audit.insert({ at: now, operator: null, action: 'agent', conversationId: null, detail: JSON.stringify({ ...detail, via: 'cli' }) });
    },
  });
  const ended = (n: number): string => (n === 0 ? 'no session was open' : `${n} session${n === 1 ? '' : 's'} ended (a running server refuses ${n === 1 ? 'it' : 'them'} within a second)`);
  switch (action) {
    case 'add': {
      const id = requireId(idArg, 'add');
      if (!AGENT_ID.test(id)) throw new UsageError(`agent ID "${id}" must be ${AGENT_ID_RULE}`);
      const name = nameOf(flags.name);
      const role = roleOf(flags.role) ?? 'agent';
      const capacity = capacityOf(flags.capacity) ?? DEFAULT_CAPACITY;
      const origin = linkOrigin(flags.origin, configuredOrigin);
      const { link } = await run(() => admin.add({ id, name, role, capacity }));
      return [`agent ${id} (${name}, ${role}, capacity ${capacity}) added`, ...linkLines(origin, link.secret, link.expiresAt)].join('\n');
    }
    case 'list':
      if (idArg !== undefined) throw new UsageError(`agents list takes no ID, got "${idArg}"`);
      return table(await admin.list());
    case 'disable':
    case 'enable': {
      const id = requireId(idArg, action);
      const before = await run(() => admin.view(id));
      const { endedSessions } = await run(() => admin.setDisabled(id, action === 'disable'));
      if ((before.state === 'disabled') === (action === 'disable')) return `agent ${id} was already ${action}d`;
      return action === 'disable' ? `agent ${id} disabled; ${ended(endedSessions)}` : `agent ${id} enabled${(await store.accounts.get(id))?.passwordHash === null ? ' (no password yet: "agents reset" makes a new link)' : ''}`;
    }
    case 'reset': {
      const id = requireId(idArg, 'reset');
      const origin = linkOrigin(flags.origin, configuredOrigin);
      const { agent, link, endedSessions } = await run(() => admin.reset(id));
      const disabled = agent.state === 'disabled' ? ['The agent is disabled: the link works once you enable them ("agents enable").'] : [];
      return [`agent ${id}: password forgotten; ${ended(endedSessions)}`, ...linkLines(origin, link.secret, link.expiresAt), ...disabled].join('\n');
    }
    case 'remove': {
      const id = requireId(idArg, 'remove');
      const { endedSessions } = await run(() => admin.remove(id));
      return `agent ${id} removed; ${ended(endedSessions)}. Their past replies and audit rows keep their name.`;
    }
    default:
      throw new UsageError(`unknown agents command "${action ?? ''}"; use ${ACTIONS}`);
  }
}
