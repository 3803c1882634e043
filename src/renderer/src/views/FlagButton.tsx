import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { canWrite } from '../store/connection-slice.ts';
import { isShortcut } from '../keyboard.ts';
import { WriteButton } from './ConnectionStatus.tsx';
import { Modal } from './Modal.tsx';

/**
 * "Send to Needs you" by hand, for a conversation not in Needs you: to hand it to a colleague or come
 * back to it. The note is optional, so Enter in the empty field flags it at once.
 */
export function FlagButton({ conversationId }: { conversationId: string }) {
  const { t } = useTranslation();
  const flag = useConsole((s) => s.flag);
  const [open, setOpen] = useState(false);
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const whyId = useId();
  // "h" while the button is on screen: it only is for the open conversation, not in Needs you.
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if (e.key !== 'h' || !isShortcut(e) || !canWrite(useConsole.getState().connection.state)) return;
      e.preventDefault();
      setOpen(true);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  const close = () => {
    setOpen(false);
    setNote('');
  };
  return (
    <>
      <WriteButton onClick={() => setOpen(true)} data-testid="flag-human" aria-keyshortcuts="h">
        {t('work.flag.button')}
      </WriteButton>
      {open && (
        <Modal title={t('work.flag.title')} onClose={close} testId="flag-dialog" describedBy={whyId}>
          <p className="muted" id={whyId}>
            {t('work.flag.why')}
          </p>
          <form
            className="operator-form"
            onSubmit={(e) => {
              e.preventDefault();
              if (busy) return;
              setBusy(true);
              void flag(conversationId, note)
                .then((done) => done && close())
                .finally(() => setBusy(false));
            }}
          >
            <label>
              {t('work.flag.note')}
              <input value={note} onChange={(e) => setNote(e.target.value)} maxLength={500} placeholder={t('work.flag.notePlaceholder')} data-autofocus />
            </label>
            <span className="actions">
              <WriteButton type="submit" className="primary" disabled={busy}>
                {t('work.flag.submit')}
              </WriteButton>
              <button type="button" onClick={close}>
                {t('work.flag.cancel')}
              </button>
            </span>
          </form>
        </Modal>
      )}
    </>
  );
}
