import { useTranslation } from 'react-i18next';
import type { AutoReplyState } from '../../../shared/conversation.ts';
import { fullTime, shortTime } from '../format.ts';

/**
 * The auto-reply state as a badge. A pause ends by itself: the badge says when, on hover in the
 * list and in words where there is room (`long`, the open conversation's header).
 */
export function StateBadge({ state, pausedUntil, long = false }: { state: AutoReplyState; pausedUntil: number | null; long?: boolean }) {
  const { t, i18n } = useTranslation();
  const until = state === 'paused' && pausedUntil !== null ? pausedUntil : null;
  if (until === null) {
    return (
      <span className={`badge ${state}`} data-testid={long ? 'auto-reply-state' : undefined}>
        {t(`list.state.${state}`)}
      </span>
    );
  }
  const time = shortTime(until, i18n.language);
  return (
    <span className={`badge ${state}`} data-testid={long ? 'auto-reply-state' : undefined} title={t('list.pausedUntilFull', { time: fullTime(until, i18n.language) })} data-until={until}>
      {long ? t('list.pausedUntil', { time }) : t(`list.state.${state}`)}
      {!long && <span className="sr-only"> {t('list.pausedUntil', { time })}</span>}
    </span>
  );
}
