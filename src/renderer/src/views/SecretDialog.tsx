import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { Modal } from './Modal.tsx';

/** A copy button whose name says what it copies ("Copy secret"), and that says when it did. */
export function CopyButton({ text, what, testId, autoFocus }: { text: string; what: string; testId?: string; autoFocus?: boolean }) {
  const { t } = useTranslation();
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 1500);
    return () => clearTimeout(timer);
  }, [copied]);
  const label = copied ? t('views.secret.copied') : t('views.secret.copy');
  return (
    <button
      type="button"
      className="mini copy"
      data-testid={testId}
      data-autofocus={autoFocus || undefined}
      aria-label={copied ? label : t('views.secret.copyWhat', { what })}
      onClick={() => void navigator.clipboard?.writeText(text).then(() => setCopied(true))}
    >
      {label}
    </button>
  );
}

/** A label, a value to paste into the integration, and its copy button. */
export function CopyField({ label, value, testId, autoFocus }: { label: string; value: string; testId: string; autoFocus?: boolean }) {
  return (
    <div className="copy-field">
      <span className="copy-label">{label}</span>
      <code data-testid={testId}>{value}</code>
      <CopyButton text={value} what={label} testId={`copy-${testId}`} autoFocus={autoFocus} />
    </div>
  );
}

/** The secret of a client just added or rotated, with what an integrator needs beside it. Shown once. */
export function SecretDialog() {
  const { t } = useTranslation();
  const fresh = useConsole((s) => s.freshSecret);
  const endpoint = useConsole((s) => s.endpoint);
  const dismiss = useConsole((s) => s.dismissSecret);
  if (!fresh) return null;
  return (
    // The first focus is on copying the secret, not on the button that makes it unrecoverable.
    <Modal title={t('views.secret.title')} describedBy="modal-description" onClose={dismiss} testId="fresh-secret">
      <p id="modal-description">{t('clients.secretOnce', { id: fresh.id })}</p>
      {endpoint && <CopyField label={t('views.secret.endpoint')} value={endpoint} testId="endpoint-value" />}
      <CopyField label={t('views.secret.clientId')} value={fresh.id} testId="client-id-value" />
      <CopyField label={t('views.secret.secret')} value={fresh.secret} testId="secret-value" autoFocus />
      <div className="row end">
        <button className="primary" onClick={dismiss}>
          {t('clients.stored')}
        </button>
      </div>
    </Modal>
  );
}
