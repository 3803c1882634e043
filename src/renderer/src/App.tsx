import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole, type ConsoleState } from './store/index.ts';
import { subscribe } from './api/bridge.ts';
import { i18n } from './i18n/index.ts';
import { ConversationList } from './views/ConversationList.tsx';
import { Transcript } from './views/Transcript.tsx';
import { Nav } from './views/Nav.tsx';
import { MainView } from './views/MainView.tsx';
import { assertNever } from '../../shared/assert-never.ts';
import { isShortcut, isTyping } from './keyboard.ts';
import { ConnectionStatus } from './views/ConnectionStatus.tsx';
import { AlertControls } from './views/AlertControls.tsx';
import { OperatorDialog } from './views/Operator.tsx';
import { AccountMenu } from './views/AccountMenu.tsx';
import { ShortcutSheet } from './views/ShortcutSheet.tsx';
import { UndoToast } from './views/UndoToast.tsx';
import { TeamNotices } from './views/TeamNotices.tsx';
import { canWrite } from './store/connection-slice.ts';
import { HeaderPrefs } from './views/HeaderPrefs.tsx';
import { TeamServer } from './views/TeamServer.tsx';
import { ErrorBoundary } from './views/ErrorBoundary.tsx';
import { useTeamPresence } from './team-presence.ts';
import { PresenceMenu } from './views/PresenceMenu.tsx';

/** Reloads at most every `ms` while live events pour in, and once more after the last one. */
/** A view that could not be displayed: the rest of the console keeps working, and a reload may help. */
function ViewFailed() {
  const { t } = useTranslation();
  return (
    <section className="view-failed" role="alert" data-testid="view-failed">
      <p>{t('error.viewFailed')}</p>
      <button type="button" onClick={() => window.location.reload()}>
        {t('error.reload')}
      </button>
    </section>
  );
}

function throttle(fn: () => void, ms: number): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let again = false;
  return () => {
    if (timer) {
      again = true;
      return;
    }
    fn();
    timer = setTimeout(function tick() {
      timer = null;
      if (again) {
        again = false;
        fn();
        timer = setTimeout(tick, ms);
      }
    }, ms);
  };
}

/** Moves the keyboard focus to the next or previous of `selector`'s elements (the first when none has it), kept in view. */
function moveFocus(selector: string, delta: number): void {
  const rows = [...document.querySelectorAll<HTMLElement>(selector)];
  if (rows.length === 0) return;
  const at = rows.findIndex((r) => r === document.activeElement);
  const next = rows[at < 0 ? 0 : Math.min(rows.length - 1, Math.max(0, at + delta))]!;
  next.focus();
  next.scrollIntoView({ block: 'nearest' });
}

export function App() {
  const { t } = useTranslation();
  const view = useConsole((s) => s.view);
  const selectedId = useConsole((s) => s.selectedId);
  const theme = useConsole((s) => s.theme);
  const endpoint = useConsole((s) => s.endpoint);
  const error = useConsole((s) => s.error);
  const searchRef = useRef<HTMLInputElement>(null);
  const composeRef = useRef<HTMLTextAreaElement>(null);
  const unreadTotal = useConsole((s) => s.unreadTotal);
  const announcements = useConsole((s) => s.announcements);
  const [sheet, setSheet] = useState(false);
  useTeamPresence();

  useEffect(() => {
    document.documentElement.dataset['theme'] = theme;
  }, [theme]);

  // "(3) Switchboard": customer messages nobody has seen, across all conversations.
  useEffect(() => {
    document.title = unreadTotal > 0 ? `(${unreadTotal}) ${t('app.title')}` : t('app.title');
  }, [unreadTotal, t]);

  useEffect(() => {
    const setLang = (): void => void (document.documentElement.lang = i18n.language);
    setLang();
    i18n.on('languageChanged', setLang);
    return () => i18n.off('languageChanged', setLang);
  }, []);

  // Follow what the console shows: unread counts, new lines in the open conversation, read markers.
  useEffect(() => {
    const seenNow = (): void => void useConsole.getState().markOpenRead();
    document.addEventListener('visibilitychange', seenNow);
    // A toast or row mark for a conversation goes once the agent has it on screen.
    const shown = (s: ConsoleState): string | null => (s.view === 'conversations' ? s.selectedId : null);
    const seenShown = (): void => {
      const s = useConsole.getState();
      const id = shown(s);
      if (id && document.visibilityState === 'visible') s.seenConversation(id);
    };
    window.addEventListener('focus', seenShown);
    const stop = useConsole.subscribe((s, prev) => {
      if (s.conversations !== prev.conversations) s.noteUnread(s.conversations);
      if (shown(s) !== shown(prev)) seenShown();
      if (s.view !== prev.view && s.view === 'conversations') void s.markOpenRead();
      if (s.transcript !== prev.transcript && s.transcript) {
        s.setUnread(s.transcript.conversation.id, s.transcript.conversation.unread ?? 0);
        s.noteTranscript(s.transcript);
        void s.markOpenRead();
      }
    });
    return () => {
      stop();
      window.removeEventListener('focus', seenShown);
      document.removeEventListener('visibilitychange', seenNow);
    };
  }, []);

  useEffect(() => {
    const s = useConsole.getState();
    void s.loadStatus();
    void s.loadConversations();
    void s.loadRequests();
    void s.loadOperator();
    const changed = new Set<string>();
    const mergeList = throttle(() => {
      const ids = [...changed];
      changed.clear();
      if (ids.length) void useConsole.getState().mergeConversations(ids).then(() => useConsole.getState().refreshUnread(ids));
    }, 250);
    const reloadTranscript = throttle(() => void useConsole.getState().loadTranscript(), 200);
    const reloadRequests = throttle(() => void useConsole.getState().loadRequests(), 300);
    // Back after a drop: whatever arrived meanwhile sent no event here, so load it all again.
    const reloadAll = (): void => {
      const st = useConsole.getState();
      void st.loadConversations();
      void st.loadRequests();
      void st.loadOperator();
      void st.loadTeam();
      if (st.selectedId) reloadTranscript();
    };
    return subscribe(
      (event) => {
        const state = useConsole.getState();
        switch (event.type) {
          case 'conversation':
          case 'delivery':
            changed.add(event.conversationId);
            mergeList();
            if (event.conversationId === state.selectedId) reloadTranscript();
            break;
          case 'request':
            if (state.view === 'requests') reloadRequests();
            break;
          case 'alert':
            state.onAlert(event);
            changed.add(event.conversationId);
            mergeList();
            break;
          case 'presence':
          case 'activity':
            state.onTeamEvent(event);
            break;
          case 'assigned':
          case 'mention':
            state.onTeamEvent(event);
            changed.add(event.conversationId);
            mergeList();
            if (event.conversationId === state.selectedId) reloadTranscript();
            break;
          case 'proposals':
            state.onProposals(event.pending);
            break;
          case 'resync':
            reloadAll();
            break;
          default:
            assertNever(event, 'console event');
        }
      },
      { onReconnect: reloadAll, onState: (state, since) => useConsole.getState().setConnection(state, since) },
    );
  }, []);

  // Console-wide shortcuts; those on the open conversation (a, s, r, e) live in Transcript.tsx, h in FlagButton.tsx.
  // The handler reads refs and the store only; registering it once is enough.
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if (isTyping(e.target)) {
        if (e.key === 'Escape' && !e.defaultPrevented && e.target instanceof HTMLElement) {
          // Esc leaves the field; in a search box Chromium would also empty it, losing the results to walk with j/k.
          if (e.target instanceof HTMLInputElement && e.target.type === 'search' && !e.target.closest('dialog')) e.preventDefault();
          e.target.blur();
        }
        return;
      }
      if (!isShortcut(e)) return;
      const s = useConsole.getState();
      if ((e.key === 'j' || e.key === 'k') && s.view === 'conversations') {
        s.move(e.key === 'j' ? 1 : -1);
        s.requestScroll();
      } else if ((e.key === 'j' || e.key === 'k') && s.view === 'needs_you') {
        // The queue: j/k move the focus along its rows and Enter opens one; nothing is opened, so nothing is marked read.
        moveFocus('[data-testid=needs-you] .queue-row', e.key === 'j' ? 1 : -1);
      } else if (e.key === 'z' && s.undo && canWrite(s.connection.state)) {
        // The toast's Undo from anywhere: after a stop by "s" the focus stays in the conversation, far from the toast.
        void s.runUndo();
      } else if (e.key === '/') {
        e.preventDefault();
        s.setView('conversations');
        searchRef.current?.focus();
      } else if (e.key === '?') {
        e.preventDefault();
        setSheet(true);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const setError = useConsole((s) => s.setError);

  return (
    <div className="app">
      <header className="top">
        <h1 title={endpoint ? `${t('app.endpoint')}: ${endpoint}` : undefined}>{t('app.title')}</h1>
        <Nav />
        <span className="endpoint" title={endpoint ? `${t('app.endpoint')}: ${endpoint}` : t('app.endpoint')}>
          {endpoint}
        </span>
        <ConnectionStatus />
        <AlertControls />
        <PresenceMenu />
        <AccountMenu />
        <TeamServer />
        <HeaderPrefs onShortcuts={() => setSheet(true)} />
      </header>
      {/* A tab without a token the service takes shows the sign-in page instead (Root.tsx). */}
      {error && (
        <div role="alert" className="error">
          <span>{t('error.generic', { message: error })}</span>
          <button type="button" className="dismiss" onClick={() => setError(null)}>
            {t('error.dismiss')}
          </button>
        </div>
      )}
      {view === 'conversations' ? (
        <main className="split">
          <ErrorBoundary resetKey="list" fallback={() => <ViewFailed />}>
            <ConversationList searchRef={searchRef} />
          </ErrorBoundary>
          <ErrorBoundary resetKey={selectedId ?? 'none'} fallback={() => <ViewFailed />}>
            <Transcript composeRef={composeRef} />
          </ErrorBoundary>
        </main>
      ) : (
        <main>
          <ErrorBoundary resetKey={view} fallback={() => <ViewFailed />}>
            <MainView view={view} />
          </ErrorBoundary>
        </main>
      )}
      <UndoToast />
      <TeamNotices />
      <OperatorDialog />
      {sheet && <ShortcutSheet onClose={() => setSheet(false)} />}
      <div className="sr-only" aria-live="polite" aria-relevant="additions" data-testid="live-region">
        {/* Each a new node (its key), so a repeated text is read again and none replaces another. */}
        {announcements.map((a) => (
          <p key={a.n}>{a.text}</p>
        ))}
      </div>
    </div>
  );
}
