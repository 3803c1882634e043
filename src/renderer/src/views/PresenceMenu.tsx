import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import type { Presence } from '../../../shared/console-api.ts';
import { PresenceDot } from './PresenceDot.tsx';
import { usePlacedPopover } from './placed-popover.ts';
import './team.css';

const MENU_ID = 'presence-menu';

/**
 * Team mode's header control: the agent's own status (Online, or Away by hand; away by itself after
 * 10 minutes without input) and the team with everyone's presence and load. Not shown to one
 * person on one desktop.
 */
export function PresenceMenu() {
  const { t } = useTranslation();
  const teamMode = useConsole((s) => s.team.teamMode);
  const autoAssign = useConsole((s) => s.team.autoAssign);
  const members = useConsole((s) => s.team.members);
  const me = useConsole((s) => s.operator?.id ?? null);
  const choice = useConsole((s) => s.presenceChoice);
  const idle = useConsole((s) => s.idle);
  const setChoice = useConsole((s) => s.setPresenceChoice);
  const loadTeam = useConsole((s) => s.loadTeam);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  usePlacedPopover(menu, button);
  useEffect(() => {
    const el = menu.current;
    if (!el) return;
    const onOpen = (e: Event): void => void ((e as ToggleEvent).newState === 'open' && loadTeam());
    el.addEventListener('toggle', onOpen);
    return () => el.removeEventListener('toggle', onOpen);
  }, [loadTeam, teamMode]);
  if (!teamMode) return null;
  const mine: Presence = choice === 'away' || idle ? 'away' : 'online';
  const status = t(`team.presence.${mine}`);
  return (
    <>
      <button type="button" ref={button} className="presence-button labelled" popoverTarget={MENU_ID} title={t('team.status.title')} data-testid="presence-button">
        <PresenceDot presence={mine} />
        <span className="label" aria-hidden="true">
          {status}
        </span>
        <span className="sr-only">{t('team.status.button', { status })}</span>
      </button>
      <div id={MENU_ID} ref={menu} className="presence-menu" popover="auto" data-testid="presence-menu">
        <fieldset>
          <legend>{t('team.status.you')}</legend>
          {(['online', 'away'] as const).map((p) => (
            <label key={p}>
              <input type="radio" name="presence" value={p} checked={choice === p} onChange={() => setChoice(p)} />
              <PresenceDot presence={p} /> {t(`team.presence.${p}`)}
            </label>
          ))}
          {idle && choice === 'online' && <p className="muted">{t('team.status.idle')}</p>}
        </fieldset>
        <h3>{t('team.status.team')}</h3>
        <ul className="team-list" data-testid="team-list">
          {members.map((m) => (
            <li key={m.id} data-member={m.id}>
              <PresenceDot presence={m.presence} />
              <span className="name ellipsis" title={m.id}>
                {m.name}
                {m.id === me && <small> ({t('team.status.you_tag')})</small>}
              </span>
              <small className="load">{m.capacity > 0 ? t('team.status.load', { open: m.openAssigned, capacity: m.capacity }) : t('team.status.loadNone')}</small>
            </li>
          ))}
        </ul>
        <p className="muted small">{autoAssign ? t('team.status.autoAssignOn') : t('team.status.autoAssignOff')}</p>
      </div>
    </>
  );
}
