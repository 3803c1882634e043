import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { namesOf } from './PresenceDot.tsx';
import { EyeIcon } from './Icons.tsx';

/** Typing: a pulsing dot; only viewing: an eye (a hollow circle read as "offline", the presence mark). */
function Mark({ typing }: { typing: boolean }) {
  return typing ? <span className="activity-mark" aria-hidden="true" /> : <span className="activity-eye" aria-hidden="true" data-testid="viewing-eye"><EyeIcon /></span>;
}

/** Who else is typing in or looking at a conversation, as words ("Ann is typing a reply"); null when nobody. */
export function useActivityText(conversationId: string): { text: string; typing: boolean } | null {
  const { t } = useTranslation();
  const me = useConsole((s) => s.operator?.id ?? null);
  const activity = useConsole((s) => s.activity[conversationId]);
  const members = useConsole((s) => s.team.members);
  if (!activity) return null;
  const name = (id: string): string => members.find((m) => m.id === id)?.name ?? id;
  const typing = activity.typing.filter((id) => id !== me);
  // Whoever types is also viewing: they are named once, as typing.
  const viewing = activity.viewing.filter((id) => id !== me && !typing.includes(id));
  if (typing.length > 0) return { text: t('team.activity.typing', { count: typing.length, names: namesOf(t, typing.map(name)) }), typing: true };
  if (viewing.length > 0) return { text: t('team.activity.viewing', { count: viewing.length, names: namesOf(t, viewing.map(name)) }), typing: false };
  return null;
}

/** In the conversation's header: "Ann is viewing", "Ann is typing a reply". */
export function ActivityNote({ conversationId }: { conversationId: string }) {
  const shown = useActivityText(conversationId);
  if (!shown) return null;
  return (
    <span className={`activity${shown.typing ? ' typing' : ''}`} data-testid="activity" title={shown.text}>
      <Mark typing={shown.typing} />
      <span className="activity-text">{shown.text}</span>
    </span>
  );
}

/**
 * On a list row: someone typing takes the place of the last line, as chat apps show it; someone
 * only looking is a mark among the badges (its words for screen readers and on hover).
 */
export function RowActivity({ conversationId, children }: { conversationId: string; children: React.ReactNode }) {
  const shown = useActivityText(conversationId);
  if (!shown) return <span className="last">{children}</span>;
  if (shown.typing) {
    return (
      <span className="last activity typing" data-testid="activity" title={shown.text}>
        <span className="activity-mark" aria-hidden="true" />
        <span className="activity-text">{shown.text}</span>
      </span>
    );
  }
  return (
    <span className="last">
      <span className="activity viewing-mark" data-testid="activity" title={shown.text}>
        <Mark typing={false} />
        <span className="sr-only">{shown.text}</span>
      </span>
      {children}
    </span>
  );
}
