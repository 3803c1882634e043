import type { StateCreator } from 'zustand';
import type { AgentView, AuditAction, AuditItem, ConsoleInput, ConsoleMethod, ConsoleOutputs, Operator, SignInLinkView } from '../../../shared/console-api.ts';
import { mayCall, type Role } from '../../../shared/console-roles.ts';
import { api } from '../api/bridge.ts';
import { forgetSession, sessionAccount } from '../api/console-token.ts';
import { i18n } from '../i18n/index.ts';
import type { ConsoleState } from './index.ts';

/** Who this console is signed in as (whoAmI). */
export interface Me {
  account: Operator | null;
  role: Role;
  /** The installation's owner (desktop window, console token): no session, no sign-out. */
  owner: boolean;
}

export interface AuditFilter {
  operatorId: string;
  action: AuditAction | '';
  conversationId: string;
}

export const NO_AUDIT_FILTER: AuditFilter = { operatorId: '', action: '', conversationId: '' };

/** A sign-in link just made (add or reset): shown once, then forgotten by the console too. */
export interface FreshLink {
  name: string;
  link: SignInLinkView;
}

export interface AccountsSlice {
  /** Until whoAmI answers: the stored session's account (an agent knows their role at once), else the owner. */
  me: Me;
  loadMe(): Promise<void>;
  signOut(): Promise<void>;
  agents: AgentView[];
  agentsLoaded: boolean;
  loadAgents(): Promise<void>;
  freshLink: FreshLink | null;
  dismissLink(): void;
  addAgent(input: ConsoleInput<'addAgent'>): Promise<boolean>;
  updateAgent(input: ConsoleInput<'updateAgent'>): Promise<boolean>;
  setAgentDisabled(id: string, disabled: boolean): Promise<void>;
  resetAgent(id: string): Promise<void>;
  removeAgent(id: string): Promise<void>;
  audit: AuditItem[];
  auditFilter: AuditFilter;
  setAuditFilter(filter: AuditFilter): void;
  loadAudit(): Promise<void>;
}

type Slice<T> = StateCreator<ConsoleState, [], [], T>;

function initialMe(): Me {
  const session = sessionAccount();
  return session ? { account: { id: session.id, name: session.name }, role: session.role, owner: false } : { account: null, role: 'admin', owner: true };
}

/**
 * Whether this console's caller may call `method` (METHOD_ROLES): views and loads an agent may not
 * use are not shown or asked for. The server refuses them anyway; this keeps the agent's console
 * free of "is for an admin" banners.
 */
export function allowed(state: Pick<AccountsSlice, 'me'>, method: ConsoleMethod): boolean {
  return mayCall(state.me.role, method);
}

export const accountsSlice: Slice<AccountsSlice> = (set, get) => {
  /** A change's answer: its error in the banner, the list again either way. */
  async function change<T>(run: Promise<{ ok: true; value: T } | { ok: false; error: { message: string } }>, announce?: (value: T) => string): Promise<T | null> {
    const r = await run;
    if (!r.ok) set({ error: r.error.message });
    else if (announce) get().announce(announce(r.value));
    await get().loadAgents();
    // The first agent added (or the last one removed) starts or ends team mode: tabs, presence, notes.
    await get().loadTeam();
    return r.ok ? r.value : null;
  }
  const nameOf = (id: string): string => get().agents.find((a) => a.id === id)?.name ?? id;
  return {
    me: initialMe(),
    async loadMe() {
      const r = await api.whoAmI({});
      if (r.ok) set({ me: r.value });
    },
    async signOut() {
      // Whatever the answer (a session already ended is as good), this page forgets the token.
      await api.signOut({});
      forgetSession();
    },
    agents: [],
    agentsLoaded: false,
    async loadAgents() {
      if (!allowed(get(), 'listAgents')) return;
      const r = await api.listAgents({});
      if (r.ok) set({ agents: r.value, agentsLoaded: true });
      else set({ error: r.error.message });
    },
    freshLink: null,
    dismissLink: () => set({ freshLink: null }),
    async addAgent(input) {
      const value = await change(api.addAgent(input));
      if (value) set({ freshLink: { name: value.agent.name, link: value.link } });
      return value !== null;
    },
    async updateAgent(input) {
      return (await change(api.updateAgent(input), (a: ConsoleOutputs['updateAgent']) => i18n.t('accounts.agents.savedNow', { name: a.name }))) !== null;
    },
    async setAgentDisabled(id, disabled) {
      const name = nameOf(id);
      await change(api.setAgentDisabled({ id, disabled }), (v: ConsoleOutputs['setAgentDisabled']) => disabled ? i18n.t('accounts.agents.disabledNow', { name, count: v.endedSessions }) : i18n.t('accounts.agents.enabledNow', { name }));
    },
    async resetAgent(id) {
      const value = await change(api.resetAgent({ id }));
      if (value) set({ freshLink: { name: value.agent.name, link: value.link } });
    },
    async removeAgent(id) {
      const name = nameOf(id);
      await change(api.removeAgent({ id }), () => i18n.t('accounts.agents.removedNow', { name }));
    },
    audit: [],
    auditFilter: NO_AUDIT_FILTER,
    setAuditFilter(auditFilter) {
      set({ auditFilter });
      void get().loadAudit();
    },
    async loadAudit() {
      if (!allowed(get(), 'listAudit')) return;
      const f = get().auditFilter;
      const r = await api.listAudit({ operatorId: f.operatorId || undefined, action: f.action || undefined, conversationId: f.conversationId.trim() || undefined, limit: 500 });
      if (r.ok) set({ audit: r.value });
      else set({ error: r.error.message });
    },
  };
};
