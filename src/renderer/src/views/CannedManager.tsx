import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { Modal } from './Modal.tsx';
import { WriteButton } from './ConnectionStatus.tsx';

type Editing = { id?: number; title: string; content: string };
const EMPTY: Editing = { title: '', content: '' };

/** Add, edit and delete canned replies. */
export function CannedManager({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const canned = useConsole((s) => s.canned);
  const load = useConsole((s) => s.loadCanned);
  const save = useConsole((s) => s.saveCanned);
  const remove = useConsole((s) => s.removeCanned);
  const [editing, setEditing] = useState<Editing>(EMPTY);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => void load(), [load]);

  return (
    <Modal title={t('work.canned.title')} onClose={onClose} testId="canned-manager" wide>
      <form
        className="canned-form"
        onSubmit={(e) => {
          e.preventDefault();
          void save(editing).then((message) => {
            setError(message);
            if (message === null) setEditing(EMPTY);
          });
        }}
      >
        <label>
          {t('work.canned.titleField')}
          <input value={editing.title} onChange={(e) => setEditing({ ...editing, title: e.target.value })} required maxLength={200} data-autofocus />
        </label>
        <label>
          {t('work.canned.contentField')}
          <textarea value={editing.content} onChange={(e) => setEditing({ ...editing, content: e.target.value })} required rows={4} />
        </label>
        <div className="row">
          <WriteButton type="submit" className="primary" disabled={!editing.title.trim() || !editing.content.trim()}>
            {editing.id ? t('work.canned.update') : t('work.canned.add')}
          </WriteButton>
          {editing.id && (
            <button type="button" onClick={() => setEditing(EMPTY)}>
              {t('work.canned.cancelEdit')}
            </button>
          )}
        </div>
        {error && (
          <p role="alert" className="form-error">
            {error}
          </p>
        )}
      </form>
      {canned.length === 0 ? (
        <p className="muted">{t('work.canned.empty')}</p>
      ) : (
        <ul className="canned-list">
          {canned.map((c) => (
            <li key={c.id}>
              <div>
                <strong className="ellipsis" title={c.title}>
                  {c.title}
                </strong>
                <p>{c.content}</p>
              </div>
              <button type="button" className="mini" onClick={() => setEditing({ id: c.id, title: c.title, content: c.content })} aria-label={t('work.canned.editOne', { title: c.title })}>
                {t('work.canned.edit')}
              </button>
              <WriteButton className="mini" onClick={() => void remove(c.id)} aria-label={t('work.canned.removeOne', { title: c.title })}>
                {t('work.canned.remove')}
              </WriteButton>
            </li>
          ))}
        </ul>
      )}
    </Modal>
  );
}
