import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { shortTime, fullTime } from '../format.ts';
import { WriteButton } from './ConnectionStatus.tsx';

/**
 * A reply or note the service held back (409 conversation_changed): what arrived since the agent
 * started writing, and the choice: send it anyway, or review (the prompt closes, the draft stays).
 */
export function ConflictPrompt({ conversationId, draftRef }: { conversationId: string; draftRef: React.RefObject<HTMLTextAreaElement | null> }) {
  const { t, i18n } = useTranslation();
  const conflict = useConsole((s) => (s.conflict?.conversationId === conversationId ? s.conflict : null));
  const sendReply = useConsole((s) => s.sendReply);
  const sendNote = useConsole((s) => s.sendNote);
  const review = useConsole((s) => s.reviewConflict);
  const sending = useConsole((s) => s.sending);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (conflict) box.current?.focus();
  }, [conflict]);
  if (!conflict) return null;
  const anyway = (): void => void (conflict.what === 'note' ? sendNote(conversationId, true) : sendReply(conversationId, true));
  return (
    <div className="conflict" role="alert" aria-labelledby="conflict-title" tabIndex={-1} ref={box} data-testid="conflict-prompt">
      <h3 id="conflict-title">{t('team.conflict.title')}</h3>
      <p>{t(`team.conflict.intro_${conflict.what}`)}</p>
      <ol className="arrived">
        {conflict.arrived.map((a) => (
          <li key={`${a.kind}-${a.id}`} className={a.role}>
            <strong>{t(`team.conflict.${a.role}`, { name: a.by ?? t('team.conflict.someone') })}</strong>{' '}
            <time dateTime={new Date(a.at).toISOString()} title={fullTime(a.at, i18n.language)}>
              {shortTime(a.at, i18n.language)}
            </time>
            <div className="text">{a.text}</div>
          </li>
        ))}
      </ol>
      <div className="row">
        <button
          type="button"
          onClick={() => {
            review();
            // The prompt (and the focus in it) goes: back to the draft, to read it again and send.
            draftRef.current?.focus();
          }}
          title={t('team.conflict.reviewHint')}
        >
          {t('team.conflict.review')}
        </button>
        <WriteButton type="button" className="primary" onClick={anyway} disabled={sending}>
          {conflict.what === 'note' ? t('team.conflict.addAnyway') : t('team.conflict.sendAnyway')}
        </WriteButton>
      </div>
    </div>
  );
}
