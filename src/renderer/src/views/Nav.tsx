import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole, type View } from '../store/index.ts';
import { i18n } from '../i18n/index.ts';
import type { ConsoleMethod } from '../../../shared/console-api.ts';
import { mayCall } from '../../../shared/console-roles.ts';
import { isKbSection, ProposalCount } from './KbTabs.tsx';

// Learn and Replay are sections of the knowledge base (KbTabs), not entries of their own here.
const VIEWS: View[] = ['conversations', 'needs_you', 'deliveries', 'dashboard', 'requests', 'clients', 'kb', 'agents'];

/** The method a view cannot do without: a view its caller may not call (METHOD_ROLES) is not offered. */
const NEEDS: Record<View, ConsoleMethod> = {
  conversations: 'listConversations',
  needs_you: 'listConversations',
  deliveries: 'listDeliveries',
  dashboard: 'stats',
  requests: 'listRequests',
  clients: 'listClients',
  kb: 'listKb',
  start: 'addClient',
  agents: 'listAgents',
  learn: 'listProposals',
  replay: 'startReplay',
};

/** Runs `fn` at most every `ms`, and once more after the last call. */
function throttle(fn: () => void, ms: number): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let again = false;
  const tick = (): void => {
    timer = null;
    if (!again) return;
    again = false;
    fn();
    timer = setTimeout(tick, ms);
  };
  return () => {
    if (timer) {
      again = true;
      return;
    }
    fn();
    timer = setTimeout(tick, ms);
  };
}

const label = (t: (k: string) => string, v: View): string =>
  v === 'agents' ? t('accounts.nav') : v === 'learn' ? t('learn.nav') : v === 'replay' ? t('replay.nav') : v === 'needs_you' || v === 'deliveries' || v === 'start' ? t(`views.nav.${v}`) : t(`nav.${v}`);

/** The view switcher, with the needs-you count; also keeps <html lang> on the chosen language. */
export function Nav() {
  const { t } = useTranslation();
  const view = useConsole((s) => s.view);
  const goTo = useConsole((s) => s.goTo);
  const waiting = useConsole((s) => s.needsYou.length);
  // The queue comes a page at a time: with more pages to come, the count is a lower bound.
  const more = useConsole((s) => s.needsYouCursor !== null);
  const noClients = useConsole((s) => s.clientsLoaded && s.clients.length === 0);
  const role = useConsole((s) => s.me.role);
  const teamMode = useConsole((s) => s.team.teamMode);
  // What waits for an admin's decision; an agent cannot decide, so no badge calls on them.
  const proposals = useConsole((s) => (mayCall(s.me.role, 'approveProposals') ? s.pendingProposals : 0));
  // One person on one desktop sees the nav of before: Agents joins it once there is a team (or
  // while it is open); the owner reaches it from their name's dialog to add the first agent.
  const may = (v: View): boolean => mayCall(role, NEEDS[v]) && (v !== 'agents' || teamMode || view === 'agents');

  useEffect(() => {
    const follow = (lng: string): void => void (document.documentElement.lang = lng);
    follow(i18n.language);
    i18n.on('languageChanged', follow);
    return () => i18n.off('languageChanged', follow);
  }, []);

  // Live: every change of the conversation list (a live event merged in, a resync after a
  // reconnect) may change who needs a human or which delivery failed; reload those, throttled.
  useEffect(() => {
    const s = useConsole.getState();
    void s.loadNeedsYou();
    void s.loadProposalCount();
    const needsYou = throttle(() => void useConsole.getState().loadNeedsYou(), 500);
    const deliveries = throttle(() => void useConsole.getState().loadDeliveries(), 500);
    return useConsole.subscribe((now, before) => {
      if (now.conversations === before.conversations) return;
      needsYou();
      if (now.view === 'deliveries') deliveries();
    });
  }, []);

  const views = (view === 'start' || noClients ? (['start', ...VIEWS] as View[]) : VIEWS).filter(may);
  return (
    <nav aria-label={t('views.nav.label')}>
      {views.map((v) => (
        <button key={v} className={view === v || (v === 'kb' && isKbSection(view)) ? 'on' : ''} aria-current={view === v ? 'page' : undefined} onClick={() => goTo(v)} data-view={v}>
          {label(t, v)}
          {v === 'needs_you' && waiting > 0 && (
            <>
              {' '}
              <span className="nav-count" data-testid="needs-you-count" aria-hidden="true">
                {more ? `${waiting}+` : waiting}
              </span>
              <span className="sr-only">({more ? t('views.nav.waitingAtLeast', { count: waiting }) : t('views.nav.waiting', { count: waiting })})</span>
            </>
          )}
          {v === 'kb' && <ProposalCount count={proposals} testId="learn-count" />}
        </button>
      ))}
    </nav>
  );
}
