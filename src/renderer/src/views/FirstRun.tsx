import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { api } from '../api/bridge.ts';
import { CopyField, SecretDialog } from './SecretDialog.tsx';
import { TestMessage } from './TestMessage.tsx';
import './first-run.css';

type StepState = 'done' | 'todo';
const STEPS = 4;

/** One step: its number and title, whether it is done, what it is for, and what to do (once it can be done). */
function Step({ n, title, text, state, children }: { n: number; title: string; text: string; state: StepState; children?: React.ReactNode }) {
  const { t } = useTranslation();
  return (
    <li className={`step ${state}`} data-step={n} data-state={state}>
      <h3 id={`step-${n}`}>
        {n}. {title}
        <span className="sep">, </span>
        <span className={`badge ${state === 'done' ? 'active' : 'muted'}`} data-testid="step-state">
          {t(`views.start.state.${state}`)}
        </span>
      </h3>
      <p className="muted">{text}</p>
      {children}
    </li>
  );
}

/**
 * How many knowledge-base entries there are (null until known): with none, every question the
 * built-in engine gets is handed to a human, and a newcomer should hear that before the first one.
 */
function useKbCount(): number | null {
  const [count, setCount] = useState<number | null>(null);
  useEffect(() => {
    let live = true;
    void api.listKb({ limit: 1 }).then((r) => live && r.ok && setCount(r.value.length));
    return () => void (live = false);
  }, []);
  return count;
}

/**
 * An empty console leads the way. Every step shows from the start with whether it is done, so a
 * newcomer sees the whole path (it showed step 1 alone), and an empty knowledge base is said plainly.
 */
export function FirstRun() {
  const { t } = useTranslation();
  const add = useConsole((s) => s.addClient);
  const endpoint = useConsole((s) => s.endpoint);
  const fresh = useConsole((s) => s.freshSecret);
  const client = useConsole((s) => s.startClient);
  const setClient = useConsole((s) => s.setStartClient);
  const goTo = useConsole((s) => s.goTo);
  const tested = useConsole((s) => client !== null && s.testMessage?.clientId === client && s.testMessage.result?.status === 200);
  const kbCount = useKbCount();
  const [id, setId] = useState('');
  const [sendUrl, setSendUrl] = useState('');
  const testButton = useRef<HTMLButtonElement>(null);
  const idInput = useRef<HTMLInputElement>(null);
  const stored = client !== null && fresh === null;
  const states: StepState[] = [client !== null, kbCount !== null && kbCount > 0, stored, tested].map((d) => (d ? 'done' : 'todo'));
  const done = states.filter((s) => s === 'done').length;

  // Once the secret is stored, the next step has the focus (the add button the dialog came from is gone).
  useEffect(() => {
    if (stored) testButton.current?.focus();
  }, [stored]);

  return (
    <section className="admin first-run" aria-labelledby="first-run-title">
      <header className="view-head">
        <h2 id="first-run-title">{t('views.start.title')}</h2>
        <p className="muted" data-testid="start-intro">
          {client !== null ? t('views.start.introAdded', { id: client, done, total: STEPS }) : t('views.start.intro')}
        </p>
      </header>
      <SecretDialog />
      <ol className="steps">
        <Step n={1} title={t('views.start.step1')} text={t('views.start.step1Text')} state={states[0]!}>
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
        </Step>
        <Step n={2} title={t('views.start.stepKb')} text={t('views.start.stepKbText')} state={states[1]!}>
          {kbCount === 0 && (
            <p className="kb-empty" role="note" data-testid="kb-empty">
              {t('views.start.kbEmpty')}
            </p>
          )}
          {kbCount !== null && (
            <button type="button" onClick={() => goTo('kb')}>
              {kbCount === 0 ? t('views.start.kbFill') : t('views.start.kbOpen')}
            </button>
          )}
        </Step>
        <Step n={3} title={t('views.start.step2')} text={t('views.start.step2Text')} state={states[2]!}>
          {client === null ? (
            <p className="after">{t('views.start.after', { step: 1 })}</p>
          ) : (
            <>
              {endpoint && <CopyField label={t('views.secret.endpoint')} value={endpoint} testId="start-endpoint" />}
              <CopyField label={t('views.secret.clientId')} value={client} testId="start-client-id" />
            </>
          )}
        </Step>
        <Step n={4} title={t('views.start.step3')} text={t('views.start.step3Text')} state={states[3]!}>
          {stored ? (
            <>
              <TestMessage clientId={client} buttonRef={testButton} />
              <button onClick={() => goTo('conversations')}>{t('views.start.done')}</button>
            </>
          ) : (
            <p className="after">{t('views.start.after', { step: 1 })}</p>
          )}
        </Step>
      </ol>
    </section>
  );
}
