import { forwardRef, useEffect, useId, useImperativeHandle, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import type { TeamMember } from '../../../shared/console-api.ts';
import { matchMembers } from '../../../shared/mention-input.ts';
import { PresenceDot } from './PresenceDot.tsx';

export interface MentionPickerHandle {
  /** Arrow keys, Enter, Tab and Escape from the note box; true when used. */
  handleKey(e: React.KeyboardEvent): boolean;
}

interface Props {
  /** What follows the `@` being typed. */
  query: string;
  onPick(member: TeamMember): void;
  onClose(): void;
  /** The list's id and its active option's, for the note box's aria-controls and aria-activedescendant. */
  onActive(listId: string, optionId: string | undefined): void;
}

/** Colleagues to @-mention in a note, as the agent types after `@` (the note box stays the field). */
export const MentionPicker = forwardRef<MentionPickerHandle, Props>(function MentionPicker({ query, onPick, onClose, onActive }, ref) {
  const { t } = useTranslation();
  const members = useConsole((s) => s.team.members);
  const me = useConsole((s) => s.operator?.id ?? null);
  const loadTeam = useConsole((s) => s.loadTeam);
  // The team as it is now: an account disabled or removed since the console loaded leaves listTeam (the service lists enabled accounts only).
  useEffect(() => void loadTeam(), [loadTeam]);
  const hits = useMemo(() => matchMembers(members.filter((m) => m.id !== me), query), [members, me, query]);
  const [active, setActive] = useState(0);
  const listId = useId();
  const at = Math.min(active, Math.max(0, hits.length - 1));
  useEffect(() => setActive(0), [query]);
  const optionId = (i: number): string => `${listId}-${i}`;
  const activeId = hits.length ? optionId(at) : undefined;
  // No match, no list: the note box then controls nothing.
  useEffect(() => onActive(hits.length ? listId : '', activeId), [onActive, listId, activeId, hits.length]);

  useImperativeHandle(ref, () => ({
    handleKey(e) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        if (hits.length) setActive((at + (e.key === 'ArrowDown' ? 1 : -1) + hits.length) % hits.length);
      } else if ((e.key === 'Enter' || e.key === 'Tab') && !e.ctrlKey && !e.metaKey && !e.shiftKey) {
        if (!hits[at]) return false;
        onPick(hits[at]);
      } else if (e.key === 'Escape') onClose();
      else return false;
      e.preventDefault();
      return true;
    },
  }));

  if (hits.length === 0) return null;
  return (
    <div className="picker mention-picker" data-testid="mention-picker">
      <ul role="listbox" id={listId} aria-label={t('team.note.mentionList')}>
        {hits.map((m, i) => (
          <li
            key={m.id}
            id={optionId(i)}
            role="option"
            aria-selected={i === at}
            className={i === at ? 'active' : undefined}
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => onPick(m)}
            onMouseEnter={() => setActive(i)}
            data-member={m.id}
          >
            <PresenceDot presence={m.presence} />
            <strong className="ellipsis">{m.name}</strong>
            <span className="ellipsis muted">@{m.id}</span>
          </li>
        ))}
      </ul>
    </div>
  );
});
