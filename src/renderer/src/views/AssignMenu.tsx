import { useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import type { ConversationSummary } from '../../../shared/console-api.ts';
import { PresenceDot, useMember } from './PresenceDot.tsx';
import { usePlacedPopover } from './placed-popover.ts';
import { useWriteBlock } from './ConnectionStatus.tsx';
import { Avatar } from './Avatar.tsx';

/**
 * The conversation header's assignee with its menu: assign to me, to a colleague (each with their
 * presence and load), or unassign. Team mode only.
 */
export function AssignMenu({ c }: { c: ConversationSummary }) {
  const { t } = useTranslation();
  const teamMode = useConsole((s) => s.team.teamMode);
  const members = useConsole((s) => s.team.members);
  const me = useConsole((s) => s.operator?.id ?? null);
  const assign = useConsole((s) => s.assign);
  const blocked = useWriteBlock();
  const assignee = useMember(c.assignee);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  usePlacedPopover(menu, button);
  if (!teamMode) return null;
  const id = `assign-menu-${c.id}`;
  const pick = (agentId: string | null): void => {
    menu.current?.hidePopover();
    button.current?.focus();
    void assign(c.id, agentId);
  };
  const mine = c.assignee !== null && c.assignee === me;
  const name = assignee?.name ?? c.assignee ?? '';
  // The whole sentence is the button's name and tooltip; on screen, the avatar and the name (or
  // "you") keep the header on one row at 1280 px beside a pause and the actions.
  const label = !c.assignee ? t('team.assign.nobody') : mine ? t('team.assign.assignedToYou') : t('team.assign.assignedTo', { name });
  const presence = assignee ? `, ${t(`team.presence.${assignee.presence}`)}` : '';
  const shown = !c.assignee ? label : mine ? t('team.assign.you') : name;
  return (
    <>
      <button
        type="button"
        ref={button}
        className="assignee-button"
        popoverTarget={id}
        disabled={!!blocked}
        title={`${label} · ${t('team.assign.menu')}`}
        data-testid="assign-button"
        data-mine={mine || undefined}
      >
        {/* Its name from its words: "Assigned to Ann Lee, Online" (or "Assigned to you"); the dot and avatar are decoration. */}
        {assignee && (
          <span aria-hidden="true" className="dot-wrap">
            <PresenceDot presence={assignee.presence} />
          </span>
        )}
        {c.assignee && <Avatar id={`op:${c.assignee}`} name={name} size="sm" />}
        {c.assignee && <span className="sr-only">{`${t('team.assign.assignedPrefix')} `}</span>}
        <span className="ellipsis alt-after" data-alt-after={presence || undefined}>
          {shown}
        </span>{' '}
        <span aria-hidden="true">▾</span>
      </button>
      <div id={id} ref={menu} className="assign-menu" popover="auto" data-testid="assign-menu">
        <h3 className="sr-only">{t('team.assign.menu')}</h3>
        <ul>
          {me && c.assignee !== me && (
            <li>
              <button type="button" onClick={() => pick(me)}>
                {t('team.assign.me')}
              </button>
            </li>
          )}
          {members
            .filter((m) => m.id !== me && m.id !== c.assignee)
            .map((m) => (
              <li key={m.id}>
                <button type="button" onClick={() => pick(m.id)} data-member={m.id}>
                  <PresenceDot presence={m.presence} />
                  <span className="ellipsis">{t('team.assign.to', { name: m.name })}</span>
                  <small className="load">{t('team.assign.load', { open: m.openAssigned, capacity: m.capacity })}</small>
                </button>
              </li>
            ))}
          {c.assignee && (
            <li>
              <button type="button" onClick={() => pick(null)}>
                {t('team.assign.unassign')}
              </button>
            </li>
          )}
        </ul>
      </div>
    </>
  );
}
