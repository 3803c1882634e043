import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { AGENT_CAPACITY_MAX, AGENT_NAME_MAX, DEFAULT_CAPACITY, type AgentView } from '../../../shared/console-api.ts';
import { ROLES, type Role } from '../../../shared/console-roles.ts';
import { useConsole } from '../store/index.ts';
import { fullTime } from '../format.ts';
import { ConfirmAgentDialog, EditAgentDialog, LinkDialog } from './AgentDialogs.tsx';
import { AuditLog } from './AuditLog.tsx';
import './accounts.css';

function AddAgentForm() {
  const { t } = useTranslation();
  const add = useConsole((s) => s.addAgent);
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('agent');
  const [capacity, setCapacity] = useState(String(DEFAULT_CAPACITY));
  const [busy, setBusy] = useState(false);
  return (
    <form
      className="agent-form add"
      aria-labelledby="add-agent-legend"
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        void add({ id: id.trim(), name: name.trim(), role, capacity: Number(capacity) }).then((ok) => {
          setBusy(false);
          if (!ok) return;
          setId('');
          setName('');
          setRole('agent');
          setCapacity(String(DEFAULT_CAPACITY));
        });
      }}
    >
      <h2 id="add-agent-legend">{t('accounts.agents.addLegend')}</h2>
      <label>
        <span>{t('accounts.agents.id')}</span>
        <input value={id} onChange={(e) => setId(e.target.value)} required maxLength={64} pattern="[A-Za-z0-9][A-Za-z0-9._\-]*" aria-describedby="agent-id-help" autoComplete="off" />
      </label>
      <label>
        <span>{t('accounts.agents.name')}</span>
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={AGENT_NAME_MAX} autoComplete="off" />
      </label>
      <label>
        <span>{t('accounts.agents.roleLabel')}</span>
        <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {t(`accounts.role.${r}`)}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>{t('accounts.agents.capacity')}</span>
        <input type="number" min={0} max={AGENT_CAPACITY_MAX} step={1} value={capacity} onChange={(e) => setCapacity(e.target.value)} required aria-describedby="capacity-help" />
      </label>
      <button type="submit" className="primary" disabled={busy || !id.trim() || !name.trim()}>
        {t('accounts.agents.add')}
      </button>
      <small className="help" id="agent-id-help">
        {t('accounts.agents.idHelp')}
      </small>
      <small className="help" id="capacity-help">
        {t('accounts.agents.capacityHelp')}
      </small>
    </form>
  );
}

/** Its state, and what it waits on: an invited agent's link, until when. */
function StateCell({ agent }: { agent: AgentView }) {
  const { t, i18n } = useTranslation();
  const badge = agent.state === 'active' ? 'active' : agent.state === 'disabled' ? 'stopped' : 'warn';
  return (
    <>
      <span className={`badge ${badge}`}>{t(`accounts.agents.state.${agent.state}`)}</span>
      {agent.state === 'invited' && (
        <small className="muted block">
          {agent.linkExpiresAt !== null ? t('accounts.agents.linkUntil', { time: fullTime(agent.linkExpiresAt, i18n.language) }) : t('accounts.agents.linkExpired')}
        </small>
      )}
    </>
  );
}

function AgentRow({ agent, me, onEdit, onConfirm }: { agent: AgentView; me: string | null; onEdit: () => void; onConfirm: (what: 'reset' | 'remove') => void }) {
  const { t, i18n } = useTranslation();
  const setDisabled = useConsole((s) => s.setAgentDisabled);
  // The owner is never disabled or removed, and nobody disables or removes themselves: the service refuses both.
  const locked = agent.owner || agent.id === me;
  return (
    <tr data-agent={agent.id}>
      <th scope="row">
        <span className="agent-name">{agent.name}</span> <code>{agent.id}</code>
        {agent.owner && <span className="badge">{t('accounts.agents.owner')}</span>}
        {agent.id === me && <span className="badge">{t('accounts.agents.you')}</span>}
      </th>
      <td>{t(`accounts.role.${agent.role}`)}</td>
      <td>{agent.capacity}</td>
      <td>
        <StateCell agent={agent} />
      </td>
      <td>
        {t(`accounts.agents.presence.${agent.presence}`)}
        {agent.openSessions > 0 && <small className="muted block">{t('accounts.agents.sessions', { count: agent.openSessions })}</small>}
      </td>
      <td>{agent.lastSignInAt === null ? t('accounts.agents.never') : fullTime(agent.lastSignInAt, i18n.language)}</td>
      <td>
        <div className="row" role="group" aria-label={t('accounts.agents.actionsOf', { name: agent.name })}>
          <button type="button" onClick={onEdit}>
            {t('accounts.agents.edit')}
          </button>
          {!locked && (
            <button type="button" onClick={() => void setDisabled(agent.id, agent.state !== 'disabled')}>
              {agent.state === 'disabled' ? t('accounts.agents.enable') : t('accounts.agents.disable')}
            </button>
          )}
          <button type="button" onClick={() => onConfirm('reset')}>
            {t('accounts.agents.reset')}
          </button>
          {!locked && (
            <button type="button" onClick={() => onConfirm('remove')}>
              {t('accounts.agents.remove')}
            </button>
          )}
        </div>
      </td>
    </tr>
  );
}

function AgentList() {
  const { t } = useTranslation();
  const agents = useConsole((s) => s.agents);
  const me = useConsole((s) => s.me.account?.id ?? null);
  const [editing, setEditing] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<{ id: string; what: 'reset' | 'remove' } | null>(null);
  const editAgent = agents.find((a) => a.id === editing);
  const confirmAgent = agents.find((a) => a.id === confirm?.id);
  return (
    <>
      <AddAgentForm />
      <table className="agents-table" aria-label={t('accounts.agents.listLabel')}>
        <thead>
          <tr>
            {(['colName', 'colRole', 'colCapacity', 'colState', 'colPresence', 'colLastSignIn', 'colActions'] as const).map((c) => (
              <th key={c} scope="col">
                {t(`accounts.agents.${c}`)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {agents.map((a) => (
            <AgentRow key={a.id} agent={a} me={me} onEdit={() => setEditing(a.id)} onConfirm={(what) => setConfirm({ id: a.id, what })} />
          ))}
        </tbody>
      </table>
      {editAgent && <EditAgentDialog agent={editAgent} onClose={() => setEditing(null)} />}
      {confirm && confirmAgent && <ConfirmAgentDialog agent={confirmAgent} what={confirm.what} onClose={() => setConfirm(null)} />}
      <LinkDialog />
    </>
  );
}

/** Reloads at most this often while presence changes come in (a team signing in at nine). */
const LIVE_RELOAD_MS = 500;

/**
 * While the view is open, the table follows the team: an agent who set their password, signed in,
 * came or went online, or was disabled elsewhere shows so without leaving the view. Presence
 * events are what the service sends for these (a sign-in opens a console, whose stream makes the
 * agent online); each reload waits a moment so a burst of them is one call. Coming back to the
 * window reloads too (a second session of an agent already online sends no event).
 */
function useLiveAgents(): void {
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const reload = (): void => {
      timer ??= setTimeout(() => {
        timer = null;
        void useConsole.getState().loadAgents();
      }, LIVE_RELOAD_MS);
    };
    const stop = useConsole.subscribe((s, prev) => {
      if (s.team.members !== prev.team.members) reload();
    });
    window.addEventListener('focus', reload);
    return () => {
      stop();
      window.removeEventListener('focus', reload);
      if (timer) clearTimeout(timer);
    };
  }, []);
}

const TABS = ['agents', 'audit'] as const;

/** The admin's Agents view: accounts (add, edit, disable, reset, remove) and, beside them, the audit log. */
export function Agents() {
  const { t } = useTranslation();
  const [tab, setTab] = useState<(typeof TABS)[number]>('agents');
  const loadAgents = useConsole((s) => s.loadAgents);
  const base = useId();
  useEffect(() => void loadAgents(), [loadAgents]);
  useLiveAgents();
  return (
    <section className="admin agents" aria-label={t('accounts.nav')}>
      <div role="tablist" aria-label={t('accounts.agents.tabs')} className="tabs">
        {TABS.map((k, i) => (
          <button
            key={k}
            type="button"
            role="tab"
            id={`${base}-tab-${k}`}
            aria-selected={tab === k}
            aria-controls={`${base}-panel-${k}`}
            tabIndex={tab === k ? 0 : -1}
            className={tab === k ? 'on' : ''}
            onClick={() => setTab(k)}
            onKeyDown={(e) => {
              if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
              const next = TABS[(i + (e.key === 'ArrowRight' ? 1 : TABS.length - 1)) % TABS.length]!;
              setTab(next);
              document.getElementById(`${base}-tab-${next}`)?.focus();
            }}
          >
            {k === 'agents' ? t('accounts.agents.tabAgents') : t('accounts.agents.tabAudit')}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${base}-panel-${tab}`} aria-labelledby={`${base}-tab-${tab}`} className="tab-panel">
        {tab === 'agents' ? <AgentList /> : <AuditLog />}
      </div>
    </section>
  );
}
