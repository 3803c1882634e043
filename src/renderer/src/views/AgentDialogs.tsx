import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { AGENT_CAPACITY_MAX, AGENT_NAME_MAX, type AgentView } from '../../../shared/console-api.ts';
import { ROLES, type Role } from '../../../shared/console-roles.ts';
import { useConsole } from '../store/index.ts';
import { fullTime } from '../format.ts';
import { Modal } from './Modal.tsx';
import { CopyField } from './SecretDialog.tsx';

/** The sign-in link just made (add or reset), with its copy button: shown once. */
export function LinkDialog() {
  const { t, i18n } = useTranslation();
  const fresh = useConsole((s) => s.freshLink);
  const dismiss = useConsole((s) => s.dismissLink);
  if (!fresh) return null;
  const { link, name } = fresh;
  return (
    <Modal title={t('accounts.agents.linkTitle', { name })} describedBy="link-once" onClose={dismiss} testId="sign-in-link">
      <p id="link-once">{t('accounts.agents.linkOnce', { name, time: fullTime(link.expiresAt, i18n.language) })}</p>
      <CopyField label={t('accounts.agents.linkLabel')} value={link.url ?? link.fragment} testId="sign-in-link-value" autoFocus />
      {link.url === null && <p className="muted">{t('accounts.agents.linkNoOrigin')}</p>}
      <div className="row end">
        <button type="button" className="primary" onClick={dismiss}>
          {t('accounts.agents.done')}
        </button>
      </div>
    </Modal>
  );
}

/** Reset and Remove end the agent's sessions at once: asked first, naming who and what happens. */
export function ConfirmAgentDialog({ agent, what, onClose }: { agent: AgentView; what: 'reset' | 'remove'; onClose: () => void }) {
  const { t } = useTranslation();
  const reset = useConsole((s) => s.resetAgent);
  const remove = useConsole((s) => s.removeAgent);
  const [busy, setBusy] = useState(false);
  return (
    <Modal title={t(`accounts.agents.${what}Title`, { name: agent.name })} describedBy="confirm-agent" onClose={onClose} testId={`confirm-${what}`}>
      <p id="confirm-agent">{t(`accounts.agents.${what}Body`)}</p>
      <div className="row end">
        <button type="button" onClick={onClose} data-autofocus>
          {t('accounts.agents.cancel')}
        </button>
        <button
          type="button"
          className="primary"
          disabled={busy}
          onClick={() => {
            setBusy(true);
            void (what === 'reset' ? reset(agent.id) : remove(agent.id)).then(onClose);
          }}
        >
          {what === 'reset' ? t('accounts.agents.resetConfirm') : t('accounts.agents.removeConfirm', { name: agent.name })}
        </button>
      </div>
    </Modal>
  );
}

/** Name, role and capacity of one agent; the owner stays an admin. */
export function EditAgentDialog({ agent, onClose }: { agent: AgentView; onClose: () => void }) {
  const { t } = useTranslation();
  const update = useConsole((s) => s.updateAgent);
  const [name, setName] = useState(agent.name);
  const [role, setRole] = useState<Role>(agent.role);
  const [capacity, setCapacity] = useState(String(agent.capacity));
  const [busy, setBusy] = useState(false);
  return (
    <Modal title={t('accounts.agents.editLabel', { name: agent.name })} onClose={onClose} testId="edit-agent">
      <form
        className="agent-form"
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          void update({ id: agent.id, name: name.trim(), role, capacity: Number(capacity) }).then((ok) => (setBusy(false), ok && onClose()));
        }}
      >
        <label>
          <span>{t('accounts.agents.name')}</span>
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={AGENT_NAME_MAX} data-autofocus />
        </label>
        <label>
          <span>{t('accounts.agents.roleLabel')}</span>
          <select value={role} onChange={(e) => setRole(e.target.value as Role)} disabled={agent.owner} aria-describedby={agent.owner ? 'owner-locked' : undefined}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {t(`accounts.role.${r}`)}
              </option>
            ))}
          </select>
        </label>
        {agent.owner && (
          <p className="muted" id="owner-locked">
            {t('accounts.agents.ownerLocked')}
          </p>
        )}
        <label>
          <span>{t('accounts.agents.capacity')}</span>
          <input type="number" min={0} max={AGENT_CAPACITY_MAX} step={1} value={capacity} onChange={(e) => setCapacity(e.target.value)} required aria-describedby="capacity-help-edit" />
        </label>
        <small className="help" id="capacity-help-edit">
          {t('accounts.agents.capacityHelp')}
        </small>
        <div className="row end">
          <button type="button" onClick={onClose}>
            {t('accounts.agents.cancel')}
          </button>
          <button type="submit" className="primary" disabled={busy || !name.trim() || capacity === ''}>
            {t('accounts.agents.save')}
          </button>
        </div>
      </form>
    </Modal>
  );
}
