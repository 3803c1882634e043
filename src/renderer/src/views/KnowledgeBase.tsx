import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { TextFilePicker } from './kb-pickers.tsx';
import { ThresholdCurve } from './ThresholdCurve.tsx';
import { useConsole } from '../store/index.ts';
import type { KbEntryView } from '../../../shared/console-api.ts';
import { Modal } from './Modal.tsx';
import { WriteButton } from './ConnectionStatus.tsx';
import { matchScore } from './match-score.ts';
import { mayCall } from '../../../shared/console-roles.ts';

/** Deleting an entry changes what customers are answered from now on: asked first, with the entry shown. */
function ConfirmDelete({ entry, onCancel, onDeleted }: { entry: KbEntryView; onCancel: () => void; onDeleted: () => void }) {
  const { t } = useTranslation();
  const remove = useConsole((s) => s.removeKb);
  const [busy, setBusy] = useState(false);
  return (
    <Modal title={t('views.kb.deleteTitle')} onClose={onCancel} testId="kb-delete" describedBy="kb-delete-what">
      <div id="kb-delete-what">
        <p>
          <strong>{entry.question}</strong>
        </p>
        <p className="muted">{t('views.kb.deleteWhy')}</p>
      </div>
      <div className="row">
        <button type="button" onClick={onCancel} data-autofocus>
          {t('views.kb.deleteCancel')}
        </button>
        <WriteButton
          className="primary"
          disabled={busy}
          onClick={() => {
            setBusy(true);
            void remove(entry.id).then((ok) => (ok ? onDeleted() : onCancel()));
          }}
        >
          {t('views.kb.deleteConfirm')}
        </WriteButton>
      </div>
    </Modal>
  );
}

export function KnowledgeBase() {
  const { t } = useTranslation();
  const kb = useConsole((s) => s.kb);
  const search = useConsole((s) => s.kbSearch);
  const setSearch = useConsole((s) => s.setKbSearch);
  const save = useConsole((s) => s.saveKb);
  const [deleting, setDeleting] = useState<KbEntryView | null>(null);
  const [deleted, setDeleted] = useState<string | null>(null);
  const importKb = useConsole((s) => s.importKb);
  const tryKb = useConsole((s) => s.tryKb);
  const blank = { question: '', answer: '', phrasings: '' };
  // Phrasings are edited as text, one per line.
  const [editing, setEditing] = useState<{ id?: number; question: string; answer: string; phrasings: string }>(blank);
  const [question, setQuestion] = useState('');
  // The answer shown is to the question in the box: emptied, it goes.
  const tried = useConsole((s) => (question.trim() === '' ? null : s.tried));
  // Entries that share nothing with the question are no "closest entries".
  const sources = tried?.sources.filter((x) => x.score > 0) ?? [];
  const [imported, setImported] = useState<number | null>(null);
  const focus = useConsole((s) => s.kbFocus);
  const openEntry = useConsole((s) => s.openKbEntry);
  const table = useRef<HTMLTableElement>(null);
  const form = useRef<HTMLFormElement>(null);
  // Agents read the knowledge base and try questions; changing it is an admin's (they propose in Learn).
  const mayEdit = useConsole((s) => mayCall(s.me.role, 'saveKb'));
  // The form is above the table: bring it into view with the entry in it, its question focused.
  const edit = (e: KbEntryView): void => {
    setEditing({ id: e.id, question: e.question, answer: e.answer, phrasings: e.phrasings.join('\n') });
    requestAnimationFrame(() => {
      form.current?.scrollIntoView({ block: 'nearest' });
      form.current?.querySelector<HTMLInputElement>('input')?.focus({ preventScroll: true });
    });
  };

  // Opened at an entry (a source link in the transcript): bring it into view and give it focus.
  useEffect(() => {
    if (focus === null) return;
    const row = table.current?.querySelector<HTMLElement>(`[data-kb="${focus}"]`);
    row?.scrollIntoView({ block: 'center' });
    row?.focus({ preventScroll: true });
  }, [focus, kb]);
  return (
    <section className="admin" aria-label={t('nav.kb')}>
      <form
        className="try"
        onSubmit={(e) => {
          e.preventDefault();
          if (question.trim()) void tryKb(question.trim());
        }}
      >
        <input placeholder={t('kb.try')} value={question} onChange={(e) => setQuestion(e.target.value)} aria-label={t('kb.try')} />
        <button type="submit">{t('kb.ask')}</button>
      </form>
      {tried && (
        <div className="suggestion" data-testid="kb-answer">
          <div className="meta">
            {tried.handoff ? t('kb.handoff') : t('kb.answer')} · {t('kb.match', { score: matchScore(tried.confidence ?? 0) })}
          </div>
          <div className="content">{tried.content}</div>
          {sources.length > 0 && tried.handoff && <div className="muted">{t('views.kb.closest')}</div>}
          {sources.length > 0 && (
            <ul className="sources">
              {sources.map((s) => (
                <li key={s.id}>
                  <button className="link" onClick={() => openEntry(s.id)} title={t('views.kb.entry', { id: s.id })}>
                    #{s.id} {s.question}
                  </button>{' '}
                  <small className="match">{t('kb.match', { score: matchScore(s.score) })}</small>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      {mayEdit && (
        <form
          ref={form}
          className="entry-form"
          aria-label={editing.id ? t('kb.editing', { id: editing.id }) : t('kb.add')}
          onSubmit={(e) => {
            e.preventDefault();
            const phrasings = editing.phrasings.split('\n').map((p) => p.trim()).filter((p) => p !== '');
            void save({ id: editing.id, question: editing.question, answer: editing.answer, phrasings }).then((ok) => ok && setEditing(blank));
          }}
        >
          <input placeholder={t('kb.question')} value={editing.question} onChange={(e) => setEditing({ ...editing, question: e.target.value })} aria-label={t('kb.question')} />
          <textarea placeholder={t('kb.answerField')} value={editing.answer} onChange={(e) => setEditing({ ...editing, answer: e.target.value })} rows={2} aria-label={t('kb.answerField')} />
          <textarea
            placeholder={t('kb.phrasingsHint')}
            value={editing.phrasings}
            onChange={(e) => setEditing({ ...editing, phrasings: e.target.value })}
            rows={2}
            aria-label={t('kb.phrasings')}
            data-testid="kb-phrasings"
          />
          {editing.id && (
            <strong className="editing" data-testid="kb-editing">
              {t('kb.editing', { id: editing.id })}
            </strong>
          )}
          <button type="submit" disabled={!editing.question.trim() || !editing.answer.trim()}>
            {editing.id ? t('kb.update') : t('kb.add')}
          </button>
          {editing.id && (
            <button type="button" onClick={() => setEditing(blank)}>
              {t('kb.cancelEdit')}
            </button>
          )}
          <TextFilePicker label={t('kb.import')} accept=".json,.csv" onText={(name, text) => void importKb(name, text).then(setImported)} />
          {imported !== null && <small>{t('kb.imported', { count: imported })}</small>}
        </form>
      )}
      <p role="status" className="muted" data-testid="kb-status">
        {deleted !== null && t('views.kb.deleted', { question: deleted })}
      </p>
      {deleting && (
        <ConfirmDelete
          entry={deleting}
          onCancel={() => setDeleting(null)}
          onDeleted={() => {
            setDeleted(deleting.question);
            setDeleting(null);
          }}
        />
      )}
      <input type="search" placeholder={t('kb.search')} value={search} onChange={(e) => setSearch(e.target.value)} aria-label={t('kb.search')} />
      {kb.length === 0 ? (
        <p className="empty">{t('kb.empty')}</p>
      ) : (
        <table className="kb grid" ref={table} data-testid="kb-table">
          <thead>
            <tr>
              <th scope="col">{t('views.kb.question')}</th>
              <th scope="col">{t('views.kb.answer')}</th>
              <th scope="col">{t('views.kb.actions')}</th>
            </tr>
          </thead>
          <tbody>
            {kb.map((e) => (
              <tr key={e.id} data-kb={e.id} className={e.id === focus ? 'focus' : undefined} aria-current={e.id === focus ? 'true' : undefined} tabIndex={e.id === focus ? -1 : undefined}>
                <td>
                  {e.question}
                  {e.phrasings.length > 0 && (
                    <small className="phrasings muted" title={e.phrasings.join('\n')}>
                      {t('kb.alsoAsked', { list: e.phrasings.join(' · ') })}
                    </small>
                  )}
                </td>
                <td>{e.answer}</td>
                <td className="actions">
                  {mayEdit && (
                    <>
                      <button className="mini" onClick={() => edit(e)}>
                        {t('kb.edit')}
                      </button>
                      <button className="mini" onClick={() => setDeleting(e)} aria-haspopup="dialog">
                        {t('kb.remove')}
                      </button>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ThresholdCurve />
    </section>
  );
}
