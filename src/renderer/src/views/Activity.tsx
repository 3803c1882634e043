import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { namesOf } from './PresenceDot.tsx';

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

/** In the conversation's header and its list row: "Ann is viewing", "Ann is typing a reply". */
export function ActivityNote({ conversationId, compact = false }: { conversationId: string; compact?: boolean }) {
  const shown = useActivityText(conversationId);
  if (!shown) return null;
  return (
    <span className={`activity${shown.typing ? ' typing' : ''}${compact ? ' compact' : ''}`} data-testid="activity" title={shown.text}>
      <span className="activity-mark" aria-hidden="true" />
      <span className="activity-text">{shown.text}</span>
    </span>
  );
}
