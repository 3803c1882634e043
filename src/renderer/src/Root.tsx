import { useEffect, useState, useSyncExternalStore } from 'react';
import { App } from './App.tsx';
import { isDesktop } from './api/bridge.ts';
import { authState, onAuthChange, signInLink } from './api/console-token.ts';
import { useConsole } from './store/index.ts';
import { i18n } from './i18n/index.ts';
import { LinkPage, SignInForm } from './views/SignIn.tsx';

/**
 * What a browser tab shows: the console once it has a token the service takes (the owner's
 * console token or an agent's session), else the sign-in page; a `#sign-in-link=` first of all.
 * The desktop window talks to its own service over IPC and never signs in.
 */
export function Root() {
  const auth = useSyncExternalStore(onAuthChange, authState);
  const theme = useConsole((s) => s.theme);
  const [link, setLink] = useState(() => (isDesktop ? null : signInLink()));
  useEffect(() => {
    document.documentElement.dataset['theme'] = theme;
  }, [theme]);
  // The sign-in pages have no Nav, which keeps <html lang> on the chosen language inside the console.
  useEffect(() => {
    const follow = (lng: string): void => void (document.documentElement.lang = lng);
    follow(i18n.language);
    i18n.on('languageChanged', follow);
    return () => i18n.off('languageChanged', follow);
  }, []);
  if (isDesktop) return <App />;
  if (link) return <LinkPage link={link} onDone={() => setLink(null)} />;
  if (auth !== 'ok') return <SignInForm auth={auth} />;
  return <App />;
}
