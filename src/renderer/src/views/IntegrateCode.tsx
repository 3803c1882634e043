import { useId, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { assertNever } from '../../../shared/assert-never.ts';
import { RECEIVER_LANGUAGES, RECEIVER_RUN, receiverFor } from '../../../shared/integrate-receivers.ts';
import { senderRun, SNIPPET_LANGUAGES, snippetFor, type SnippetInput, type SnippetLanguage, type SnippetRun } from '../../../shared/integrate-snippets.ts';
import type { ReplySettings } from './ReplySettingsSummary.tsx';
import { CopyButton } from './SecretDialog.tsx';

/** What the code does: answer a website visitor at once, send an IM message, or receive the IM replies. */
export const SNIPPET_KINDS = ['website_dialog', 'auto_dialog', 'receiver'] as const;
export type SnippetKind = (typeof SNIPPET_KINDS)[number];

const LANGUAGE_NAMES: Record<SnippetLanguage, string> = { python: 'Python', node: 'Node.js', curl: 'curl' };

const stored = <T extends string>(key: string, choices: readonly T[], fallback: T): T => choices.find((c) => c === localStorage.getItem(key)) ?? fallback;

/** A receiver is a server: no curl one. */
function languagesOf(kind: SnippetKind): readonly SnippetLanguage[] {
  return kind === 'receiver' ? RECEIVER_LANGUAGES : SNIPPET_LANGUAGES;
}

function codeOf(kind: SnippetKind, language: SnippetLanguage, input: SnippetInput): { code: string; run: SnippetRun } {
  switch (kind) {
    case 'website_dialog':
    case 'auto_dialog':
      return { code: snippetFor(language, { ...input, event: kind }), run: senderRun(language, kind) };
    case 'receiver': {
      const receiver = language === 'node' ? 'node' : 'python';
      return { code: receiverFor(receiver, input), run: RECEIVER_RUN[receiver] };
    }
    default:
      return assertNever(kind, 'snippet kind');
  }
}

/** The choice of what the code does (native radios: one tab stop, arrows move, each with its label and hint). */
function KindChoice({ kind, onChange }: { kind: SnippetKind; onChange: (kind: SnippetKind) => void }) {
  const { t } = useTranslation();
  const base = useId();
  return (
    <fieldset className="kinds">
      <legend>{t('integrate.kind.legend')}</legend>
      {SNIPPET_KINDS.map((k) => (
        <div key={k} className="kind">
          <input
            type="radio"
            id={`${base}-${k}`}
            name={`${base}-kind`}
            value={k}
            checked={k === kind}
            onChange={() => onChange(k)}
            aria-describedby={`${base}-${k}-hint`}
            data-testid={`kind-${k}`}
          />
          <label htmlFor={`${base}-${k}`}>{t(`integrate.kind.${k}`)}</label>
          <small id={`${base}-${k}-hint`}>{t(`integrate.kind.${k}Hint`)}</small>
        </div>
      ))}
    </fieldset>
  );
}

/** The language tabs (WAI-ARIA tabs: one tab stop, arrows and Home/End move, the panel follows). */
function SnippetTabs({ kind, input }: { kind: SnippetKind; input: SnippetInput }) {
  const { t } = useTranslation();
  const [chosen, setChosen] = useState<SnippetLanguage>(() => stored('sb.snippetLanguage', SNIPPET_LANGUAGES, 'python'));
  const languages = languagesOf(kind);
  // The choice is kept for the kinds that have it (curl again after looking at a receiver).
  const language = languages.includes(chosen) ? chosen : languages[0]!;
  const base = useId();
  const tabs = useRef<Partial<Record<SnippetLanguage, HTMLButtonElement | null>>>({});
  const choose = (next: SnippetLanguage, focus: boolean) => {
    setChosen(next);
    localStorage.setItem('sb.snippetLanguage', next);
    if (focus) tabs.current[next]?.focus();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    const i = languages.indexOf(language);
    const n = languages.length;
    const to = { ArrowRight: (i + 1) % n, ArrowLeft: (i - 1 + n) % n, Home: 0, End: n - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    choose(languages[to]!, true);
  };
  const { code, run } = codeOf(kind, language, input);
  const name = t('integrate.snippet', { language: LANGUAGE_NAMES[language] });
  return (
    <div className="snippets">
      <div role="tablist" aria-label={t('integrate.language')} className="tabs" onKeyDown={onKeyDown}>
        {languages.map((l) => (
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
          <CopyButton key={`${kind}-${language}`} text={code} what={name} testId={`copy-snippet-${language}`} />
        </div>
        <pre data-testid="snippet" data-language={language} data-kind={kind} tabIndex={0} aria-label={name}>
          <code>{code}</code>
        </pre>
      </div>
    </div>
  );
}

/**
 * The code for an integration: what it does (website chat, IM chat, the receiver of IM replies),
 * then the language. The IM snippet fills in the client's default send_url, and the panel says what
 * in the client's settings stands between a scheduled reply and the receiver.
 */
export function IntegrateCode({ input, settings, content }: { input: SnippetInput; settings: ReplySettings; content: ReactNode }) {
  const { sendUrl } = settings;
  const { t } = useTranslation();
  const [kind, setKind] = useState<SnippetKind>(() => stored('sb.snippetKind', SNIPPET_KINDS, 'website_dialog'));
  const choose = (next: SnippetKind) => {
    setKind(next);
    localStorage.setItem('sb.snippetKind', next);
  };
  return (
    <>
      <KindChoice kind={kind} onChange={choose} />
      {kind !== 'receiver' && content}
      {kind === 'auto_dialog' && !sendUrl && (
        <p className="note warn" data-testid="send-url-note">
          {t('integrate.noSendUrl', { id: input.clientId })}
        </p>
      )}
      {kind === 'auto_dialog' && !settings.fallbackText && (
        <p className="note" data-testid="fallback-note">
          {t('integrate.noFallback')}
        </p>
      )}
      {kind === 'receiver' && (
        <p className="note" data-testid="receiver-note">
          {t('integrate.receiverNote', { id: input.clientId })}
        </p>
      )}
      <SnippetTabs kind={kind} input={{ ...input, sendUrl }} />
    </>
  );
}
