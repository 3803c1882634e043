import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { conversationTitle } from '../format.ts';
import { WriteButton } from './ConnectionStatus.tsx';

/** After a stop: five seconds to take it back (undo resumes auto-reply). */
export function UndoToast() {
  const { t } = useTranslation();
  const undo = useConsole((s) => s.undo);
  const undoStop = useConsole((s) => s.undoStop);
  const dismiss = useConsole((s) => s.dismissUndo);
  const name = useConsole((s) => {
    const id = s.undo?.conversationId;
    if (!id) return '';
    const c = s.conversations.find((x) => x.id === id) ?? (s.transcript?.conversation.id === id ? s.transcript?.conversation : undefined);
    return c ? conversationTitle(c) : id;
  });
  return (
    <div className="toast-area" role="status">
      {undo && (
        <div className="toast" data-testid="undo-toast">
          <span className="ellipsis" title={name}>
            {t('work.undo.stopped', { name })}
          </span>
          <WriteButton className="primary" onClick={() => void undoStop()}>
            {t('work.undo.button')}
          </WriteButton>
          <button type="button" className="mini" onClick={dismiss} aria-label={t('work.close')}>
            ×
          </button>
        </div>
      )}
    </div>
  );
}
