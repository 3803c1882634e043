import { useEffect, useRef, useSyncExternalStore } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from './store/index.ts';
import { subscribe } from './api/bridge.ts';
import { authState, onAuthChange } from './api/console-token.ts';
import { i18n, LANGUAGES, type Language } from './i18n/index.ts';
import { ConversationList } from './views/ConversationList.tsx';
import { Transcript } from './views/Transcript.tsx';
import { Nav } from './views/Nav.tsx';
import { MainView } from './views/MainView.tsx';

/** Reloads at most every `ms` while live events pour in, and once more after the last one. */
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

export function App() {
  const { t } = useTranslation();
  const view = useConsole((s) => s.view);
  const theme = useConsole((s) => s.theme);
  const endpoint = useConsole((s) => s.endpoint);
  const error = useConsole((s) => s.error);
  const auth = useSyncExternalStore(onAuthChange, authState);
  const searchRef = useRef<HTMLInputElement>(null);
  const composeRef = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    document.documentElement.dataset['theme'] = theme;
  }, [theme]);

  useEffect(() => {
    const s = useConsole.getState();
    void s.loadStatus();
    void s.loadConversations();
    void s.loadRequests();
    const changed = new Set<string>();
    const mergeList = throttle(() => {
      const ids = [...changed];
      changed.clear();
      if (ids.length) void useConsole.getState().mergeConversations(ids);
    }, 250);
    const reloadTranscript = throttle(() => void useConsole.getState().loadTranscript(), 200);
    const reloadRequests = throttle(() => void useConsole.getState().loadRequests(), 300);
    const reloadAll = (): void => {
      const st = useConsole.getState();
      void st.loadConversations();
      void st.loadRequests();
      if (st.selectedId) reloadTranscript();
    };
    return subscribe((event) => {
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
      }
    }, reloadAll);
  }, []);

  // The key handler reads refs only; registering it once is enough.
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      const target = e.target as HTMLElement;
      if (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA') {
        if (e.key === 'Escape') target.blur();
        return;
      }
      const s = useConsole.getState();
      if (e.key === 'j') s.move(1);
      else if (e.key === 'k') s.move(-1);
      else if (e.key === 's' && s.transcript?.conversation.autoReply !== 'stopped') void s.stop();
      else if (e.key === 'r' && s.transcript?.conversation.autoReply === 'stopped') void s.resume();
      else if (e.key === 'a' && s.transcript) {
        e.preventDefault();
        composeRef.current?.focus();
      }
      else if (e.key === '/') {
        e.preventDefault();
        s.setView('conversations');
        searchRef.current?.focus();
      } else return;
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const toggleTheme = useConsole((s) => s.toggleTheme);
  const setError = useConsole((s) => s.setError);

  return (
    <div className="app">
      <header className="top">
        <h1>{t('app.title')}</h1>
        <Nav />
        <span className="endpoint" title={t('app.endpoint')}>
          {endpoint}
        </span>
        <button onClick={toggleTheme} aria-label={t('app.theme')}>
          {theme === 'dark' ? t('app.light') : t('app.dark')}
        </button>
        <select
          aria-label={t('app.language')}
          value={i18n.language}
          onChange={(e) => {
            localStorage.setItem('sb.lang', e.target.value);
            void i18n.changeLanguage(e.target.value as Language);
          }}
        >
          {Object.entries(LANGUAGES).map(([code, name]) => (
            <option key={code} value={code}>
              {name}
            </option>
          ))}
        </select>
      </header>
      {auth !== 'ok' && (
        <div role="alert" className="error" data-testid="auth-problem">
          {t(`auth.${auth}`)}
        </div>
      )}
      {error && auth === 'ok' && (
        <div role="alert" className="error" onClick={() => setError(null)}>
          {t('error.generic', { message: error })}
        </div>
      )}
      {view === 'conversations' ? (
        <main className="split">
          <ConversationList searchRef={searchRef} />
          <Transcript composeRef={composeRef} />
        </main>
      ) : (
        <main>
          <MainView view={view} />
        </main>
      )}
    </div>
  );
}
