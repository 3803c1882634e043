import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import type { TranscriptEntry } from '../../../shared/console-api.ts';
import { Attachments } from './Attachments.tsx';

function Entry({ e, mediaOrigins }: { e: TranscriptEntry; mediaOrigins: readonly string[] }) {
  const { t } = useTranslation();
  const retry = useConsole((s) => s.retryDelivery);
  const assist = useConsole((s) => s.assist);
  const canAssist = e.kind === 'message' && e.role === 'customer' && e.messageInfo?.['event_type'] === 'auto_dialog';
  const quote = e.messageInfo?.['quote'] as { content?: string; msg_id?: string } | undefined;
  return (
    <li className={`entry ${e.kind} ${e.role}`} data-entry={e.msgId}>
      <div className="meta">
        <strong>{e.kind === 'suggestion' ? t('transcript.suggestion') : t(`transcript.role.${e.role}`)}</strong>
        {e.speaker && <span> {String(e.messageInfo?.['nickname'] ?? e.speaker)}</span>}
        <time> {new Date(e.at).toLocaleTimeString()}</time>
        {canAssist && (
          <button className="mini" onClick={() => void assist({ msgId: e.msgId })}>
            {t('transcript.assist')}
          </button>
        )}
      </div>
      {quote && <blockquote>{quote.content ?? quote.msg_id}</blockquote>}
      <div className="content">{e.content}</div>
      <Attachments info={e.messageInfo} mediaOrigins={mediaOrigins} />
      {e.decision && (
        <div className={`why ${e.decision.scheduled ? 'yes' : 'no'}`} data-testid="why">
          {t(`transcript.reason.${e.decision.reason}`)}
          {e.decision.outcome && ` · ${t(`transcript.outcome.${e.decision.outcome}`)}`}
          {e.decision.note && <small> ({e.decision.note})</small>}
        </div>
      )}
      {e.sources && e.sources.length > 0 && (
        <div className="why" data-testid="sources">
          {t('transcript.sources', { engine: e.engine ?? '', list: e.sources.map((s) => `#${s.id} (${s.score})`).join(', ') })}
        </div>
      )}
      {e.handoff && <div className="why no">{t('transcript.handoff')}{e.cause ? ` (${e.cause})` : ''}</div>}
      {e.delivery && (
        <div className={`delivery ${e.delivery.state}`}>
          {t('transcript.delivery', { state: e.delivery.state, attempts: e.delivery.attempts })}
          {e.delivery.lastError && <small> · {e.delivery.lastError}</small>}
          {e.delivery.state === 'dead' && <button onClick={() => void retry(e.delivery!.id)}>{t('transcript.retry')}</button>}
        </div>
      )}
    </li>
  );
}

function AssistPanel({ composeRef }: { composeRef: React.RefObject<HTMLTextAreaElement | null> }) {
  const { t } = useTranslation();
  const suggestion = useConsole((s) => s.suggestion);
  const assisting = useConsole((s) => s.assisting);
  const assist = useConsole((s) => s.assist);
  const [text, setText] = useState('');
  const [copied, setCopied] = useState(false);
  return (
    <div className="assist">
      {assisting && <p className="muted">{t('transcript.thinking')}</p>}
      {suggestion && (
        <div className="suggestion" data-testid="suggestion">
          <div className="meta">
            <strong>{t('transcript.suggestion')}</strong> · {t('transcript.contextUsed', { count: suggestion.contextMessages })}
          </div>
          <div className="content">{suggestion.handoff ? t('transcript.noSuggestion') : suggestion.content}</div>
          {!suggestion.handoff && (
            <button
              className="mini"
              onClick={() => {
                void navigator.clipboard?.writeText(suggestion.content).then(() => setCopied(true));
                setTimeout(() => setCopied(false), 1500);
              }}
            >
              {copied ? t('transcript.copied') : t('transcript.copy')}
            </button>
          )}
        </div>
      )}
      <form
        onSubmit={(ev) => {
          ev.preventDefault();
          if (text.trim()) void assist({ content: text });
        }}
      >
        <textarea ref={composeRef} value={text} onChange={(ev) => setText(ev.target.value)} placeholder={t('transcript.compose')} rows={2} />
        <button type="submit" disabled={assisting || !text.trim()}>
          {t('transcript.suggest')}
        </button>
      </form>
    </div>
  );
}

export function Transcript({ composeRef }: { composeRef: React.RefObject<HTMLTextAreaElement | null> }) {
  const { t } = useTranslation();
  const transcript = useConsole((s) => s.transcript);
  const loadEarlier = useConsole((s) => s.loadEarlier);
  const stop = useConsole((s) => s.stop);
  const resume = useConsole((s) => s.resume);
  if (!transcript) return <section className="transcript empty">{t('transcript.pick')}</section>;
  const c = transcript.conversation;
  return (
    <section className="transcript" aria-label="transcript">
      <header>
        <h2>{c.groupId ? `# ${c.groupId}` : (c.customerId ?? c.peer)}</h2>
        <span className={`badge ${c.autoReply}`} data-testid="auto-reply-state">
          {t(`list.state.${c.autoReply}`)}
        </span>
        {c.channel === 'im' &&
          (c.autoReply === 'stopped' ? (
            <button onClick={() => void resume()}>{t('transcript.resume')}</button>
          ) : (
            <button onClick={() => void stop()}>{t('transcript.stop')}</button>
          ))}
      </header>
      {transcript.hasEarlier && (
        <button className="earlier" onClick={() => void loadEarlier()}>
          {t('transcript.earlier')}
        </button>
      )}
      <ol className="entries">
        {transcript.entries.map((e) => (
          <Entry key={`${e.kind}-${e.id}`} e={e} mediaOrigins={transcript.mediaOrigins} />
        ))}
      </ol>
      <AssistPanel composeRef={composeRef} />
    </section>
  );
}
