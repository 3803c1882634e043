import { useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';
import type { ConsoleOutputs } from '../../../shared/console-api.ts';
import { useConsole } from '../store/index.ts';
import { translateNote } from '../i18n/server-notes.ts';
import { BUILTIN_ENGINE } from '../../../shared/engine-config.ts';

type Result = ConsoleOutputs['sendTestMessage'];
type Tone = 'ok' | 'warn' | 'bad';

/** The knowledge-base engine's own causes for not answering: a missing or too distant entry. */
const KB_MISS = /^(no knowledge-base entry matched|best match scored )/;

/** One line a support agent reads instead of the JSON: answered, handed off (and why), or refused. */
function summary(result: Result, t: TFunction): { tone: Tone; text: string; kbMiss: boolean; source: { id: number; label: string } | null } {
  const answer = result.answer;
  if (result.status === 200 && answer) {
    if (!answer.handoff) {
      const best = answer.sources[0];
      if (answer.engine !== BUILTIN_ENGINE) return { tone: 'ok', text: t('integrate.summary.engine', { engine: answer.engine ?? '?' }), kbMiss: false, source: null };
      return {
        tone: 'ok',
        text: t('integrate.summary.kb'),
        kbMiss: false,
        source: best ? { id: best.id, label: t('integrate.summary.source', { question: best.question ?? `#${best.id}`, score: best.score }) } : null,
      };
    }
    const cause = answer.cause ?? '';
    if (answer.engine === BUILTIN_ENGINE && KB_MISS.test(cause)) return { tone: 'warn', text: t('integrate.summary.kbMiss', { cause: translateNote(cause) }), kbMiss: true, source: null };
    return { tone: 'warn', text: t('integrate.summary.handoff', { cause: cause ? translateNote(cause) : t('integrate.summary.noCause') }), kbMiss: false, source: null };
  }
  if (result.status === 200) return { tone: 'ok', text: t('integrate.summary.accepted'), kbMiss: false, source: null };
  const problem = typeof result.body === 'object' && result.body !== null ? (result.body as { code?: unknown; detail?: unknown }) : {};
  const code = typeof problem.code === 'string' ? problem.code : `HTTP ${result.status}`;
  const detail = typeof problem.detail === 'string' ? problem.detail : '';
  return { tone: 'bad', text: t('integrate.summary.refused', { code, detail }), kbMiss: false, source: null };
}

/** The endpoint's whole answer: a one-line reading, status, headers, the pretty body, and what was sent. */
function TestResponse({ result }: { result: Result }) {
  const { t } = useTranslation();
  const goTo = useConsole((s) => s.goTo);
  const openKbEntry = useConsole((s) => s.openKbEntry);
  const openConversation = useConsole((s) => s.openConversation);
  const line = summary(result, t);
  const body = typeof result.body === 'object' && result.body !== null ? (result.body as { conversation_id?: unknown }) : {};
  const conversationId = typeof body.conversation_id === 'string' ? body.conversation_id : null;
  return (
    <div className="response" data-testid="test-response">
      <p className={`summary tone-${line.tone}`} data-testid="test-summary">
        {line.text}
        {line.source && (
          <>
            {' '}
            <button className="link" onClick={() => openKbEntry(line.source!.id)}>
              {line.source.label}
            </button>
          </>
        )}
        {line.kbMiss && (
          <>
            {' '}
            <button className="link" onClick={() => goTo('kb')}>
              {t('integrate.summary.openKb')}
            </button>
          </>
        )}
      </p>
      <p className="status-line">
        <strong>{t('views.start.response')}</strong>{' '}
        <span data-testid="test-status">
          {t('views.start.status', { status: result.status, requestId: result.requestId ?? '-', latency: result.latencyMs.toFixed(0) })}
        </span>
        {conversationId && (
          <>
            {' · '}
            <button className="link" onClick={() => openConversation(conversationId)}>
              {t('integrate.openConversation')}
            </button>
          </>
        )}
      </p>
      <p className="label">{t('integrate.headers')}</p>
      <pre data-testid="test-headers" tabIndex={0} aria-label={t('integrate.headers')}>
        {Object.entries(result.headers)
          .map(([name, value]) => `${name}: ${value}`)
          .join('\n')}
      </pre>
      <p className="label">{t('integrate.body')}</p>
      <pre data-testid="test-body" tabIndex={0} aria-label={t('integrate.body')}>
        {JSON.stringify(result.body, null, 2)}
      </pre>
      <details>
        <summary>{t('integrate.sent', { endpoint: result.endpoint })}</summary>
        <pre data-testid="test-sent">{JSON.stringify(result.sent, null, 2)}</pre>
      </details>
    </div>
  );
}

/** "Send a test message": a real signed website_dialog as the client, and the endpoint's whole answer. */
export function TestMessage({ clientId, content, buttonRef }: { clientId: string; content?: string; buttonRef?: React.RefObject<HTMLButtonElement | null> }) {
  const { t } = useTranslation();
  const test = useConsole((s) => (s.testMessage?.clientId === clientId ? s.testMessage : null));
  const send = useConsole((s) => s.sendTestMessage);
  return (
    <div className="test-message">
      <button ref={buttonRef} className="primary" disabled={test?.sending} onClick={() => void send(clientId, content)}>
        {test?.sending ? t('views.start.sending') : t('views.start.send')}
      </button>
      {/* Announced: the outcome; the details below are there to read, not to be read out. */}
      <div role="status" aria-live="polite" className="sr-only">
        {test?.error ?? (test?.result ? `${test.result.status} ${summary(test.result, t).text}` : '')}
      </div>
      {test?.error && (
        <p className="error-text" data-testid="test-error">
          {test.error}
        </p>
      )}
      {test?.result && <TestResponse result={test.result} />}
    </div>
  );
}
