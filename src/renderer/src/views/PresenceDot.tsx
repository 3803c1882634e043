import { useTranslation } from 'react-i18next';
import type { Presence, TeamMember } from '../../../shared/console-api.ts';
import { useConsole } from '../store/index.ts';

/**
 * A colleague's presence beside their name: a dot whose colour and shape differ (filled online,
 * half away, hollow offline, so it does not rest on colour alone), with the word for screen readers.
 */
export function PresenceDot({ presence }: { presence: Presence }) {
  const { t } = useTranslation();
  const word = t(`team.presence.${presence}`);
  return (
    <span className={`presence-dot presence-${presence}`} title={word} data-presence={presence}>
      <span className="sr-only">{word}</span>
    </span>
  );
}

/** A team member by account id (undefined until the team is loaded, or for a removed account). */
export function useMember(id: string | null | undefined): TeamMember | undefined {
  return useConsole((s) => (id ? s.team.members.find((m) => m.id === id) : undefined));
}

/** Names a list of accounts as a sentence does: "Ann", "Ann and Omar", "Ann, Omar and Lee". */
export function namesOf(t: (key: string, o?: Record<string, unknown>) => string, names: string[]): string {
  if (names.length <= 1) return names[0] ?? '';
  return t('team.activity.and', { first: names.slice(0, -1).join(', '), second: names.at(-1) });
}
