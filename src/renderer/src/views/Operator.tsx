import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { PersonIcon } from './Icons.tsx';
import { Avatar } from './Avatar.tsx';
import { Modal } from './Modal.tsx';
import { WriteButton } from './ConnectionStatus.tsx';

/** Operator id and display name: they go into operator replies, the transcript and the audit. */
export function OperatorForm({ autoFocus = false, onDone }: { autoFocus?: boolean; onDone?: () => void }) {
  const { t } = useTranslation();
  const current = useConsole((s) => s.operator);
  const save = useConsole((s) => s.saveOperator);
  const [id, setId] = useState(current?.id ?? '');
  const [name, setName] = useState(current?.name ?? '');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <form
      className="operator-form"
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        void save({ id: id.trim(), name: name.trim() }).then((message) => {
          setBusy(false);
          setError(message);
          if (message === null) onDone?.();
        });
      }}
    >
      <label>
        {t('work.operator.id')}
        <input value={id} onChange={(e) => setId(e.target.value)} required maxLength={64} autoComplete="username" data-autofocus={autoFocus || undefined} />
      </label>
      <label>
        {t('work.operator.name')}
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} autoComplete="name" />
      </label>
      <WriteButton type="submit" className="primary" disabled={busy || !id.trim() || !name.trim()}>
        {t('work.operator.save')}
      </WriteButton>
      {error && (
        <p role="alert" className="form-error">
          {error}
        </p>
      )}
    </form>
  );
}

/** Asked for when a write needs the operator's name; the action runs once it is saved. */
export function OperatorDialog() {
  const { t } = useTranslation();
  const prompt = useConsole((s) => s.operatorPrompt);
  const close = useConsole((s) => s.closeOperatorPrompt);
  if (!prompt) return null;
  return (
    <Modal title={t('work.operator.title')} onClose={close} testId="operator-dialog">
      <p className="muted">{t('work.operator.why')}</p>
      <OperatorForm autoFocus />
      <TeamEntry onOpen={close} />
    </Modal>
  );
}

/** For an admin (the owner): where a team starts, since the nav shows Agents only once there is one. */
function TeamEntry({ onOpen }: { onOpen: () => void }) {
  const { t } = useTranslation();
  const role = useConsole((s) => s.me.role);
  const goTo = useConsole((s) => s.goTo);
  if (role !== 'admin') return null;
  return (
    <p className="muted team-entry">
      {t('accounts.fromOperator.text')}{' '}
      <button
        type="button"
        className="link"
        data-testid="open-agents"
        onClick={() => {
          onOpen();
          goTo('agents');
        }}
      >
        {t('accounts.fromOperator.open')}
      </button>
    </p>
  );
}

/** The header: who is signed in, and a way to change it. */
export function OperatorBadge() {
  const { t } = useTranslation();
  const operator = useConsole((s) => s.operator);
  const ask = useConsole((s) => s.askOperator);
  if (operator === undefined) return null;
  if (operator === null) {
    return (
      <button type="button" className="operator signin" onClick={() => ask()} title={t('work.operator.signIn')}>
        {/* On the most crowded header (data-fold=2) the icon stands for the words, which stay its name. */}
        <PersonIcon />
        <span className="label">{t('work.operator.signIn')}</span>
      </button>
    );
  }
  return (
    <button type="button" className="operator" onClick={() => ask()} title={t('work.operator.change', { name: operator.name, id: operator.id })} data-testid="operator">
      <Avatar id={`op:${operator.id}`} name={operator.name} size="sm" />
      <span className="ellipsis">{operator.name}</span>
      <span className="sr-only">{t('work.operator.changeShort')}</span>
    </button>
  );
}
