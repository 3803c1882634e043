import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { EntryOptions } from './kb-pickers.tsx';
import { useConsole } from '../store/index.ts';
import { mayCall } from '../../../shared/console-roles.ts';
import { WriteButton } from './ConnectionStatus.tsx';

/**
 * "Propose an entry" by hand, for agents and admins alike: a question and its answer, or one more
 * way to ask an existing entry. It waits in the list like the others; an admin decides.
 */
export function LearnPropose() {
  const { t } = useTranslation();
  const role = useConsole((s) => s.me.role);
  const kb = useConsole((s) => s.kb);
  const save = useConsole((s) => s.saveProposal);
  const [question, setQuestion] = useState('');
  const [answer, setAnswer] = useState('');
  const [target, setTarget] = useState('');
  const [busy, setBusy] = useState(false);
  const id = useId();
  if (!mayCall(role, 'saveProposal')) return null;
  // A phrasing takes its entry's answer: only a new entry needs one written.
  const ready = question.trim() !== '' && (target !== '' || answer.trim() !== '') && !busy;
  const entry = target === '' ? undefined : kb.find((e) => String(e.id) === target);
  return (
    <section className="learn-propose" aria-labelledby={`${id}-title`} data-testid="learn-propose">
      <h3 id={`${id}-title`}>{t('learn.propose.title')}</h3>
      <p className="muted" id={`${id}-why`}>
        {t('learn.propose.why')}
      </p>
      <form
        aria-describedby={`${id}-why`}
        onSubmit={(e) => {
          e.preventDefault();
          if (!ready) return;
          setBusy(true);
          void save({ question, answer: entry ? entry.answer : answer, entryId: entry ? entry.id : null })
            .then((done) => {
              if (!done) return;
              setQuestion('');
              setAnswer('');
              setTarget('');
            })
            .finally(() => setBusy(false));
        }}
      >
        <label>
          {t('learn.propose.question')}
          <textarea value={question} rows={2} maxLength={2000} onChange={(e) => setQuestion(e.target.value)} data-testid="propose-question" />
        </label>
        <label>
          {t('learn.propose.target')}
          <select value={target} onChange={(e) => setTarget(e.target.value)} data-testid="propose-target">
            <option value="">{t('learn.propose.newEntry')}</option>
            <EntryOptions kb={kb} />
          </select>
        </label>
        {entry ? (
          <p className="muted" data-testid="propose-entry-answer">
            {t('learn.propose.entryAnswer', { answer: entry.answer })}
          </p>
        ) : (
          <label>
            {t('learn.propose.answer')}
            <textarea value={answer} rows={3} maxLength={20_000} onChange={(e) => setAnswer(e.target.value)} data-testid="propose-answer" />
          </label>
        )}
        <span className="actions">
          <WriteButton type="submit" className="primary" disabled={!ready}>
            {t('learn.propose.submit')}
          </WriteButton>
        </span>
      </form>
    </section>
  );
}
