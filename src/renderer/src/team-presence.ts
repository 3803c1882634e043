import { useEffect } from 'react';
import { useConsole } from './store/index.ts';
import { TEAM_TIMING } from '../../shared/console-team.ts';

/** What counts as the agent being at their desk. */
const INPUT_EVENTS = ['keydown', 'pointerdown', 'pointermove', 'wheel', 'touchstart', 'focus'] as const;
/** How often idleness is looked at (a minute's precision on a 10-minute threshold). */
const IDLE_CHECK_MS = 30_000;

/**
 * The console's side of presence (protocol v1.2): a heartbeat while it is open (and at once when
 * what it shows changes: the open conversation, the view, away or back), "away" after 10 minutes
 * without input, and the team's state loaded at start.
 */
export function useTeamPresence(): void {
  useEffect(() => {
    const s = useConsole.getState();
    void s.loadTeam();
    void s.heartbeat();
    const beat = setInterval(() => void useConsole.getState().heartbeat(), TEAM_TIMING.heartbeatEveryMs);
    let lastInput = Date.now();
    const onInput = (): void => {
      lastInput = Date.now();
      useConsole.getState().setIdle(false);
    };
    for (const e of INPUT_EVENTS) window.addEventListener(e, onInput, { passive: true, capture: true });
    const idleCheck = setInterval(() => {
      if (Date.now() - lastInput >= TEAM_TIMING.awayAfterIdleMs) useConsole.getState().setIdle(true);
    }, IDLE_CHECK_MS);
    const onVisible = (): void => void useConsole.getState().heartbeat();
    document.addEventListener('visibilitychange', onVisible);
    const stop = useConsole.subscribe((now, before) => {
      if (now.selectedId === before.selectedId && now.view === before.view) return;
      // Another conversation, or away from them: what was being typed is not being typed now.
      if (now.typingIn !== null && now.typingIn !== now.selectedId) now.stopTyping();
      void now.heartbeat();
    });
    return () => {
      clearInterval(beat);
      clearInterval(idleCheck);
      for (const e of INPUT_EVENTS) window.removeEventListener(e, onInput, { capture: true });
      document.removeEventListener('visibilitychange', onVisible);
      stop();
    };
  }, []);
}
