import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { CopyField, SecretDialog } from './SecretDialog.tsx';
import { TestMessage } from './TestMessage.tsx';

/** An empty console leads the way: add a client, copy what the integration needs, send a test message. */
export function FirstRun() {
  const { t } = useTranslation();
  const add = useConsole((s) => s.addClient);
  const endpoint = useConsole((s) => s.endpoint);
  const fresh = useConsole((s) => s.freshSecret);
  const client = useConsole((s) => s.startClient);
  const setClient = useConsole((s) => s.setStartClient);
  const goTo = useConsole((s) => s.goTo);
  const [id, setId] = useState('');
  const [sendUrl, setSendUrl] = useState('');
  const testButton = useRef<HTMLButtonElement>(null);
  const idInput = useRef<HTMLInputElement>(null);
  const stored = client !== null && fresh === null;

  // Once the secret is stored, the next step has the focus (the add button the dialog came from is gone).
  useEffect(() => {
    if (stored) testButton.current?.focus();
  }, [stored]);

  return (
    <section className="admin first-run" aria-labelledby="first-run-title">
      <header className="view-head">
        <h2 id="first-run-title">{t('views.start.title')}</h2>
        <p className="muted" data-testid="start-intro">
          {client !== null ? t('views.start.introAdded', { id: client }) : t('views.start.intro')}
        </p>
      </header>
      <SecretDialog />
      <section className="step" aria-labelledby="step-1">
        <h3 id="step-1">{t('views.start.step1')}</h3>
        <p className="muted">{t('views.start.step1Text')}</p>
        {client === null ? (
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              const newId = id.trim();
              void add(newId, sendUrl.trim() ? { sendUrl: sendUrl.trim() } : {}).then((ok) => {
                if (ok) setClient(newId);
                else idInput.current?.focus();
              });
            }}
          >
            <input ref={idInput} placeholder={t('clients.id')} value={id} onChange={(e) => setId(e.target.value)} aria-label={t('clients.id')} />
            <input placeholder={t('clients.field.sendUrl')} value={sendUrl} onChange={(e) => setSendUrl(e.target.value)} aria-label={t('clients.field.sendUrl')} />
            <button type="submit" className="primary" disabled={!id.trim()}>
              {t('clients.add')}
            </button>
          </form>
        ) : (
          <p>
            <strong>{client}</strong> ✓
          </p>
        )}
      </section>
      {client !== null && (
        <section className="step" aria-labelledby="step-2">
          <h3 id="step-2">{t('views.start.step2')}</h3>
          <p className="muted">{t('views.start.step2Text')}</p>
          {endpoint && <CopyField label={t('views.secret.endpoint')} value={endpoint} testId="start-endpoint" />}
          <CopyField label={t('views.secret.clientId')} value={client} testId="start-client-id" />
        </section>
      )}
      {stored && (
        <section className="step" aria-labelledby="step-3">
          <h3 id="step-3">{t('views.start.step3')}</h3>
          <p className="muted">{t('views.start.step3Text')}</p>
          <TestMessage clientId={client} buttonRef={testButton} />
          <button onClick={() => goTo('conversations')}>{t('views.start.done')}</button>
        </section>
      )}
    </section>
  );
}
