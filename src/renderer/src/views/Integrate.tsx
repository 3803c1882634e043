import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { ClientView } from '../../../shared/console-api.ts';
import { DEFAULT_SNIPPET_CONTENT, SECRET_ENV, SNIPPET_LANGUAGES, SNIPPET_RUN, snippetFor, type SnippetLanguage } from '../../../shared/integrate-snippets.ts';
import { useConsole } from '../store/index.ts';
import { CopyButton, CopyField } from './SecretDialog.tsx';
import { TestMessage } from './TestMessage.tsx';

const LANGUAGE_NAMES: Record<SnippetLanguage, string> = { python: 'Python', node: 'Node.js', curl: 'curl' };
/** Until the status call answered: the protocol's default address, so the snippets are never empty. */
const DEFAULT_ENDPOINT = 'http://127.0.0.1:8787/custom-im/chat-messages';

const storedLanguage = (): SnippetLanguage => {
  const saved = localStorage.getItem('sb.snippetLanguage');
  return SNIPPET_LANGUAGES.find((l) => l === saved) ?? 'python';
};

/** A wildcard listen address is no address to send to: the integrator needs the machine's own. */
const listensEverywhere = (endpoint: string): boolean => /^https?:\/\/(0\.0\.0\.0|\[::\])[:/]/.test(endpoint);

/** The language tabs (WAI-ARIA tabs: one tab stop, arrows and Home/End move, the panel follows). */
function SnippetTabs({ snippets }: { snippets: Record<SnippetLanguage, string> }) {
  const { t } = useTranslation();
  const [language, setLanguage] = useState<SnippetLanguage>(storedLanguage);
  const base = useId();
  const tabs = useRef<Partial<Record<SnippetLanguage, HTMLButtonElement | null>>>({});
  const choose = (next: SnippetLanguage, focus: boolean) => {
    setLanguage(next);
    localStorage.setItem('sb.snippetLanguage', next);
    if (focus) tabs.current[next]?.focus();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    const i = SNIPPET_LANGUAGES.indexOf(language);
    const n = SNIPPET_LANGUAGES.length;
    const to = { ArrowRight: (i + 1) % n, ArrowLeft: (i - 1 + n) % n, Home: 0, End: n - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    choose(SNIPPET_LANGUAGES[to]!, true);
  };
  const run = SNIPPET_RUN[language];
  return (
    <div className="snippets">
      <div role="tablist" aria-label={t('integrate.language')} className="tabs" onKeyDown={onKeyDown}>
        {SNIPPET_LANGUAGES.map((l) => (
          <button
            key={l}
            ref={(el) => {
              tabs.current[l] = el;
            }}
            type="button"
            role="tab"
            id={`${base}-tab-${l}`}
            aria-selected={l === language}
            aria-controls={`${base}-panel`}
            tabIndex={l === language ? 0 : -1}
            onClick={() => choose(l, false)}
          >
            {LANGUAGE_NAMES[l]}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${base}-panel`} aria-labelledby={`${base}-tab-${language}`} className="snippet">
        <div className="row">
          <span className="muted">{t('integrate.run', { file: run.file, command: run.command, needs: run.needs })}</span>
          <CopyButton key={language} text={snippets[language]} what={t('integrate.snippet', { language: LANGUAGE_NAMES[language] })} testId={`copy-snippet-${language}`} />
        </div>
        <pre data-testid="snippet" data-language={language} tabIndex={0} aria-label={t('integrate.snippet', { language: LANGUAGE_NAMES[language] })}>
          <code>{snippets[language]}</code>
        </pre>
      </div>
    </div>
  );
}

/**
 * Everything to connect one client: endpoint, client id, ready-to-run snippets and a live test.
 * `secret` is only given right after this console made it (create or rotate); the panel never
 * keeps it anywhere else.
 */
export function IntegratePanel({ client, secret }: { client: ClientView; secret: string | null }) {
  const { t } = useTranslation();
  const endpoint = useConsole((s) => s.endpoint) ?? DEFAULT_ENDPOINT;
  const [content, setContent] = useState(DEFAULT_SNIPPET_CONTENT);
  const titleId = useId();
  const clearTest = useConsole((s) => s.clearTestMessage);
  useEffect(() => clearTest, [clearTest]);
  const input = { endpoint, clientId: client.id, secret, content: content.trim() || DEFAULT_SNIPPET_CONTENT };
  const snippets = Object.fromEntries(SNIPPET_LANGUAGES.map((l) => [l, snippetFor(l, input)])) as Record<SnippetLanguage, string>;
  return (
    <section className="integrate" aria-labelledby={titleId} data-testid="integrate">
      <h2 id={titleId}>{t('integrate.title', { id: client.id })}</h2>
      <p className="muted">{t('integrate.intro')}</p>
      <div className="fields">
        <CopyField label={t('views.secret.endpoint')} value={endpoint} testId="integrate-endpoint" />
        <CopyField label={t('views.secret.clientId')} value={client.id} testId="integrate-client-id" />
        {secret && <CopyField label={t('views.secret.secret')} value={secret} testId="integrate-secret" />}
      </div>
      {listensEverywhere(endpoint) && <p className="note warn">{t('integrate.wildcard')}</p>}
      {secret ? (
        <p className="note" data-testid="secret-note">
          {t('integrate.secretShown')}
        </p>
      ) : (
        <p className="note" data-testid="secret-note">
          {t('integrate.secretHidden', { env: SECRET_ENV })}
        </p>
      )}
      {!client.enabled && <p className="note warn">{t('integrate.disabled')}</p>}
      <h3>{t('integrate.snippets')}</h3>
      <label className="content-field">
        <span>{t('integrate.content')}</span>
        <input value={content} maxLength={2000} onChange={(e) => setContent(e.target.value)} />
      </label>
      <SnippetTabs snippets={snippets} />
      <h3>{t('views.start.send')}</h3>
      <p className="muted">{t('integrate.testText')}</p>
      <TestMessage clientId={client.id} content={input.content} />
    </section>
  );
}
