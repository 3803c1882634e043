import { useEffect, useRef, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { LanguageSelect } from './LanguageSelect.tsx';
import { TeamServer } from './TeamServer.tsx';
import { PASSWORD_MIN, type SignInOutputs } from '../../../shared/sign-in-api.ts';
import { signInCall, type SignInProblem } from '../api/sign-in.ts';
import { forgetSignInLink, keepSession, type AuthState } from '../api/console-token.ts';
import { i18n } from '../i18n/index.ts';
import { fullTime } from '../format.ts';
import { withCode } from './code-text.tsx';
import './accounts.css';

/** Signed in: the session token is kept where the console token is, and the console starts afresh with it. */
function signedIn(value: SignInOutputs['signIn']): void {
  keepSession(value.token, value.account);
  location.reload();
}

function problemText(t: (key: string, options?: Record<string, unknown>) => string, problem: SignInProblem): string {
  switch (problem.kind) {
    case 'failed':
      return t('accounts.signIn.failed');
    case 'throttled':
      return t('accounts.signIn.throttled', { count: problem.minutes });
    case 'link':
      return t('accounts.link.invalid');
    case 'invalid':
      return problem.message;
    case 'unreachable':
      return t('accounts.signIn.unreachable', { message: problem.message });
  }
}

/** The page around a sign-in form: the product's name, a language choice, one card. */
function Page({ title, children }: { title: string; children: ReactNode }) {
  const { t } = useTranslation();
  useEffect(() => void (document.title = `${title} · ${t('app.title')}`), [title, t]);
  return (
    <main className="sign-in-page">
      <div className="sign-in-card">
        <p className="brand">{t('app.title')}</p>
        <h1>{title}</h1>
        {children}
        <LanguageSelect className="sign-in-lang" />
        {/* On a team server in the desktop app: the way back to this computer's own service, before any sign-in. */}
        <TeamServer />
      </div>
    </main>
  );
}

/** Account id and password. `auth` says why the page is here: a note for the owner, or "your session ended". */
export function SignInForm({ auth }: { auth: Exclude<AuthState, 'ok'> }) {
  const { t } = useTranslation();
  const [id, setId] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<SignInProblem | null>(null);
  // Why the page is here ("you signed out") holds until the agent tries again: then only that try's answer shows.
  const [tried, setTried] = useState(false);
  const passwordRef = useRef<HTMLInputElement>(null);
  return (
    <Page title={t('accounts.signIn.title')}>
      {!tried && auth === 'ended' && (
        <p role="alert" className="sign-in-notice" data-testid="session-ended">
          {t('accounts.signIn.ended')}
        </p>
      )}
      {!tried && auth === 'signed_out' && (
        <p role="status" className="sign-in-notice" data-testid="signed-out">
          {t('accounts.signIn.signedOut')}
        </p>
      )}
      <p className="sign-in-intro">{t('accounts.signIn.intro')}</p>
      <form
        className="sign-in-form"
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          setTried(true);
          setProblem(null);
          void signInCall('signIn', { id: id.trim(), password }).then((r) => {
            if (r.ok) return signedIn(r.value);
            setBusy(false);
            setProblem(r.problem);
            setPassword('');
            // The password went with the refusal: the cursor waits where the next one goes (after the re-enable).
            requestAnimationFrame(() => passwordRef.current?.focus());
          });
        }}
      >
        <label>
          <span>{t('accounts.signIn.id')}</span>
          <input name="username" value={id} onChange={(e) => setId(e.target.value)} required maxLength={64} autoComplete="username" autoFocus />
        </label>
        <label>
          <span>{t('accounts.signIn.password')}</span>
          <input ref={passwordRef} name="password" type="password" value={password} onChange={(e) => setPassword(e.target.value)} required autoComplete="current-password" aria-describedby={problem ? 'sign-in-problem' : undefined} />
        </label>
        {problem && (
          <p role="alert" className="form-error" id="sign-in-problem" data-testid="sign-in-problem">
            {problemText(t, problem)}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy || !id.trim() || !password}>
          {busy ? t('accounts.signIn.busy') : t('accounts.signIn.submit')}
        </button>
      </form>
      {auth === 'refused' ? (
        <p className="muted owner-note" data-testid="auth-problem" role="alert">
          {withCode(t('auth.refused'))}
        </p>
      ) : (
        // For the installation's owner, who needs no password: one short line, the how under it.
        <details className="muted owner-note" data-testid={auth === 'missing' ? 'auth-problem' : 'owner-note'}>
          <summary>{t('accounts.signIn.ownerNote')}</summary>
          <p>{withCode(t('auth.missing'))}</p>
        </details>
      )}
    </Page>
  );
}

type LinkState = { kind: 'checking' } | { kind: 'invalid' } | { kind: 'unreachable'; message: string } | { kind: 'ready'; info: SignInOutputs['linkInfo'] };

/** `#sign-in-link=…`: the agent named by the link chooses their password, and is signed in. */
export function LinkPage({ link, onDone }: { link: string; onDone: () => void }) {
  const { t } = useTranslation();
  const [state, setState] = useState<LinkState>({ kind: 'checking' });
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [tried, setTried] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<SignInProblem | null>(null);
  useEffect(() => {
    void signInCall('linkInfo', { link }).then((r) => {
      if (r.ok) setState({ kind: 'ready', info: r.value });
      else if (r.problem.kind === 'unreachable') setState({ kind: 'unreachable', message: r.problem.message });
      else setState({ kind: 'invalid' });
    });
  }, [link]);
  const toSignIn = (
    <button type="button" onClick={() => (forgetSignInLink(), onDone())}>
      {t('accounts.link.toSignIn')}
    </button>
  );
  if (state.kind !== 'ready') {
    const text = state.kind === 'checking' ? t('accounts.link.checking') : state.kind === 'invalid' ? t('accounts.link.invalid') : t('accounts.signIn.unreachable', { message: state.message });
    return (
      <Page title={t('accounts.signIn.title')}>
        <p role={state.kind === 'checking' ? 'status' : 'alert'} className="sign-in-notice" data-testid="link-state">
          {text}
        </p>
        {state.kind !== 'checking' && toSignIn}
      </Page>
    );
  }
  const { info } = state;
  const short = [...password].length < PASSWORD_MIN;
  const differ = password !== again;
  const local = tried && (short ? t('accounts.link.tooShort') : differ ? t('accounts.link.mismatch') : null);
  const shown = local || (problem ? problemText(t, problem) : null);
  return (
    <Page title={t('accounts.link.title', { name: info.name })}>
      <p>{t('accounts.link.intro', { id: info.id })}</p>
      <p className="muted">{t('accounts.link.expires', { time: fullTime(info.expiresAt, i18n.language) })}</p>
      <form
        className="sign-in-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setTried(true);
          if (short || differ) return;
          setBusy(true);
          setProblem(null);
          void signInCall('usePasswordLink', { link, password }).then((r) => {
            if (r.ok) return signedIn(r.value);
            setBusy(false);
            setProblem(r.problem);
          });
        }}
      >
        {/* For password managers: the account this new password belongs to. */}
        <input type="text" name="username" value={info.id} autoComplete="username" readOnly hidden />
        <label>
          <span>{t('accounts.link.password')}</span>
          <input type="password" name="new-password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="new-password" minLength={PASSWORD_MIN} required autoFocus aria-invalid={tried && short} aria-describedby="link-rule" />
        </label>
        <small className="help" id="link-rule">
          {t('accounts.link.tooShort')}
        </small>
        <label>
          <span>{t('accounts.link.confirm')}</span>
          <input type="password" name="confirm-password" value={again} onChange={(e) => setAgain(e.target.value)} autoComplete="new-password" required aria-invalid={tried && !short && differ} />
        </label>
        {shown && (
          <p role="alert" className="form-error" data-testid="link-problem">
            {shown}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t('accounts.link.busy') : t('accounts.link.submit')}
        </button>
      </form>
      {problem?.kind === 'link' && toSignIn}
    </Page>
  );
}
