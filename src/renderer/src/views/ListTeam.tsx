import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import type { Assignment } from '../../../shared/console-api.ts';
import { PresenceDot, useMember } from './PresenceDot.tsx';
import { initials } from '../../../shared/console-display.ts';

/** In the order docs/console.md names them: an agent's own work first. */
const TAB_ORDER: readonly Assignment[] = ['mine', 'unassigned', 'all'];

/** Team mode's Mine / Unassigned / All above the conversation list (one person alone has no tabs). */
export function AssignmentTabs() {
  const { t } = useTranslation();
  const teamMode = useConsole((s) => s.team.teamMode);
  const current = useConsole((s) => s.filter.assignment ?? 'all');
  const setFilter = useConsole((s) => s.setFilter);
  if (!teamMode) return null;
  return (
    <div className="assignment-tabs" role="group" aria-label={t('team.tabs.label')} data-testid="assignment-tabs">
      {TAB_ORDER.map((a) => (
        <button key={a} type="button" className={current === a ? 'chip on' : 'chip'} aria-pressed={current === a} onClick={() => setFilter({ assignment: a })} data-assignment={a}>
          {t(`team.tabs.${a}`)}
        </button>
      ))}
    </div>
  );
}

/** Who has a conversation, on its row: their name and presence (nothing for one nobody has). */
export function RowAssignee({ id }: { id: string | null }) {
  const { t } = useTranslation();
  const teamMode = useConsole((s) => s.team.teamMode);
  const member = useMember(id);
  if (!teamMode || id === null) return null;
  const name = member?.name ?? id;
  const presence = member?.presence ?? 'offline';
  const whole = t('team.list.assignee', { name, presence: t(`team.presence.${presence}`) });
  // Initials on the row, so the customer's name and ids keep their room; the name on hover and for screen readers.
  return (
    <span className="badge assignee" title={whole} data-testid="row-assignee" data-assignee={id}>
      <PresenceDot presence={presence} />
      <span aria-hidden="true">{initials(name)}</span>
      <span className="sr-only">{name}</span>
    </span>
  );
}
