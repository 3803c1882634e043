import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import type { TeamNotice } from '../store/team-notices-slice.ts';

/**
 * "Assigned to you" and "mentioned you" on screen, for an agent without desktop alerts: who and
 * which conversation, with Open. The live region has already said it, so this is a plain labelled
 * region (no second announcement), and it never takes the focus.
 */
export function TeamNotices() {
  const { t } = useTranslation();
  const notices = useConsole((s) => s.notices);
  const open = useConsole((s) => s.openConversation);
  const dismiss = useConsole((s) => s.dismissNotice);
  if (notices.length === 0) return null;
  return (
    <section className="team-notices" aria-label={t('team.notice.region')} data-testid="team-notices">
      {notices.map((n) => (
        <div key={n.key} className={`toast team-notice ${n.kind}`} data-kind={n.kind} data-conversation={n.conversationId}>
          <span className="ellipsis" title={n.text}>
            {n.text}
          </span>
          <button type="button" className="primary" onClick={() => open(n.conversationId)}>
            {t('team.notice.open')}
          </button>
          <button type="button" className="mini" onClick={() => dismiss(n.key)} aria-label={t('work.close')}>
            ×
          </button>
        </div>
      ))}
    </section>
  );
}

/** A conversation's row: assigned to you, or a mention of you in it, not opened yet. */
export function RowMark({ kind }: { kind: TeamNotice['kind'] | undefined }) {
  const { t } = useTranslation();
  if (!kind) return null;
  const word = t(`team.notice.mark_${kind}`);
  return (
    <span className={`badge mark ${kind}`} title={word} data-testid="row-mark" data-mark={kind}>
      <span aria-hidden="true">{kind === 'mention' ? '@' : t('team.notice.new')}</span>
      <span className="sr-only">{word}</span>
    </span>
  );
}
