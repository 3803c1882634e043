import { useCallback, useEffect, useLayoutEffect, useMemo, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { i18n } from '../i18n/index.ts';
import { canWrite } from '../store/connection-slice.ts';
import { effectiveAutoReply } from '../../../shared/conversation.ts';
import type { ConversationSummary, TranscriptEntry } from '../../../shared/console-api.ts';
import { ErrorBoundary } from './ErrorBoundary.tsx';
import { WholeMessage } from './WholeMessage.tsx';
import { isShortcut } from '../keyboard.ts';
import { fullTime, inTimeOrder, shortTime } from '../format.ts';
import { conversationRef, conversationTitle, titleHover } from '../../../shared/console-display.ts';
import { CopyId } from './CopyId.tsx';
import { Entry } from './TranscriptEntry.tsx';
import { Compose } from './Compose.tsx';
import { Avatar } from './Avatar.tsx';
import { WriteButton } from './ConnectionStatus.tsx';
import { StateBadge } from './StateBadge.tsx';
import { useNow } from './relative-time.tsx';
import { FlagButton } from './FlagButton.tsx';
import { AssignMenu } from './AssignMenu.tsx';
import { ActivityNote } from './Activity.tsx';

type Ref = React.RefObject<HTMLTextAreaElement | null>;

/** Stop and resume apply to IM conversations only: a web chat is answered inside its own request. */
function AutoReplyButton({ c }: { c: ConversationSummary }) {
  const { t } = useTranslation();
  const stop = useConsole((s) => s.stopAutoReply);
  const resume = useConsole((s) => s.resumeAutoReply);
  if (c.channel === 'web') {
    return (
      <>
        <WriteButton notApplicable={{ text: t('work.stop.webWhy'), id: 'stop-why' }}>{t('work.stop.button')}</WriteButton>
        <span id="stop-why" className="sr-only">
          {t('work.stop.webWhy')}
        </span>
      </>
    );
  }
  return c.autoReply === 'stopped' ? (
    <WriteButton onClick={() => void resume(c.id)} aria-keyshortcuts="r">
      {t('transcript.resume')}
    </WriteButton>
  ) : (
    <WriteButton onClick={() => void stop(c.id)} aria-keyshortcuts="s">
      {t('transcript.stop')}
    </WriteButton>
  );
}

function ConversationHeader({ c }: { c: ConversationSummary }) {
  const { t, i18n } = useTranslation();
  const resolve = useConsole((s) => s.resolve);
  const title = conversationTitle(c);
  const now = useNow(30_000, c.autoReply === 'paused' ? c.pausedUntil : null);
  const state = effectiveAutoReply(c.autoReply, c.pausedUntil, now);
  // A group's customer fields name whoever wrote last: the group is not theirs.
  const ref = conversationRef(c);
  const sub = [c.groupId ? t('transcript.groupChat') : null, c.clientId, t(`list.channel.${c.channel}`)].filter(Boolean).join(' · ');
  return (
    <header className="conv-head">
      <Avatar id={c.groupId ?? c.customerId ?? c.peer} name={title} />
      <div className="titles">
        <h2 className="ellipsis" title={titleHover(c)}>
          {title}
        </h2>
        <small className="ellipsis" title={`${ref} · ${sub}`}>
          <CopyId id={ref} /> · {sub}
        </small>
        {/* Team mode: a colleague looking at it or writing in it, said as it changes. */}
        <span role="status" className="activity-status">
          <ActivityNote conversationId={c.id} />
        </span>
      </div>
      <AssignMenu c={c} />
      <StateBadge state={state} pausedUntil={c.pausedUntil} long />
      {c.needsHuman && <span className="badge warn">{t('list.state.needs_human')}</span>}
      {!c.needsHuman && c.resolvedAt && (
        <span className="resolved" data-testid="resolved">
          {t('work.resolve.done', { who: c.resolvedBy ?? '?' })}{' '}
          <time dateTime={new Date(c.resolvedAt).toISOString()} title={fullTime(c.resolvedAt, i18n.language)}>
            {shortTime(c.resolvedAt, i18n.language)}
          </time>
        </span>
      )}
      <span className="actions">
        {c.needsHuman ? (
          <WriteButton className="primary" onClick={() => void resolve(c.id)} aria-keyshortcuts="e">
            {t('work.resolve.button')}
          </WriteButton>
        ) : (
          <FlagButton conversationId={c.id} />
        )}
        <AutoReplyButton c={c} />
      </span>
    </header>
  );
}

/** No transcript on screen: none picked, the picked one loading, or why it could not be loaded (with Retry). */
function NotShown() {
  const { t } = useTranslation();
  const selectedId = useConsole((s) => s.selectedId);
  const load = useConsole((s) => (s.transcriptLoad?.id === s.selectedId ? s.transcriptLoad : null));
  const retry = useConsole((s) => s.loadTranscript);
  if (!selectedId || !load) return <section className="transcript empty">{t('transcript.pick')}</section>;
  if (load.error === null) {
    return (
      <section className="transcript empty" aria-busy="true" data-testid="transcript-loading">
        <span className="spinner" aria-hidden="true" /> <span role="status">{t('transcript.loading')}</span>
      </section>
    );
  }
  return (
    <section className="transcript empty" data-testid="transcript-failed">
      <p role="alert">{t('transcript.loadFailed', { message: load.error })}</p>
      <button type="button" onClick={() => void retry()}>
        {t('transcript.loadRetry')}
      </button>
    </section>
  );
}

/** An entry that could not be displayed: says so, with what was stored, so the rest stays usable. */
function BrokenEntry({ e }: { e: TranscriptEntry }) {
  const { t } = useTranslation();
  return (
    <li className="entry broken" data-entry={e.msgId} data-testid="broken-entry">
      <div className="bubble">
        <div className="why tone-bad">{t('transcript.entryFailed')}</div>
        <details>
          <summary>{t('transcript.entryRaw')}</summary>
          <pre>{JSON.stringify(e, null, 2)}</pre>
        </details>
        {/* The entry carries only what a line shows: the message as stored, on demand. */}
        {e.kind === 'message' && e.stored && <WholeMessage messageId={e.id} bytes={e.stored.bytes} cut={false} />}
      </div>
    </li>
  );
}

/** The open conversation: who said what and when, why it was answered, and the reply box. */
export function Transcript({ composeRef }: { composeRef: Ref }) {
  const { t } = useTranslation();
  const transcript = useConsole((s) => s.transcript);
  const loadEarlier = useConsole((s) => s.loadEarlier);
  const operator = useConsole((s) => s.operator);
  const insertDraft = useConsole((s) => s.insertDraft);
  const scroller = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  const shownId = useRef<string | null>(null);
  // Where the operator was when they asked for earlier lines: the page lands above, the view stays put.
  const anchor = useRef<{ height: number; top: number; first: string } | null>(null);
  // Each line comes named by the service (the latest name sent for its sender's id).
  const entries = useMemo(() => inTimeOrder(transcript?.entries ?? []), [transcript]);
  const id = transcript?.conversation.id ?? null;
  const canSend = transcript !== null && transcript.sendTarget?.ok !== false && operator !== null;
  const use = useCallback(
    (text: string) => {
      if (!id) return;
      insertDraft(id, text);
      requestAnimationFrame(() => composeRef.current?.focus());
    },
    [id, insertDraft, composeRef],
  );

  // Earlier lines went in above: move down by their height, so the line that was on top stays there.
  useLayoutEffect(() => {
    const el = scroller.current;
    const was = anchor.current;
    const first = entries[0] ? `${entries[0].kind}-${entries[0].id}` : '';
    // Only once the earlier page is in (a live line at the bottom may come first).
    if (!el || !was || first === was.first) return;
    anchor.current = null;
    el.scrollTop = was.top + (el.scrollHeight - was.height);
  }, [entries]);

  // Follow new lines while the operator is at the bottom; a newly opened conversation starts there.
  // In the next frame, before it paints: reading the height here would force the layout early.
  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    if (shownId.current !== id) {
      shownId.current = id;
      atBottom.current = true;
    }
    if (!atBottom.current) return;
    const frame = requestAnimationFrame(() => (el.scrollTop = el.scrollHeight));
    return () => cancelAnimationFrame(frame);
  }, [id, entries]);

  // Shortcuts on the open conversation exist only while it is shown, and only where they apply.
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if (!isShortcut(e)) return;
      const s = useConsole.getState();
      const c = s.transcript?.conversation;
      if (!c) return;
      const im = c.channel === 'im';
      const live = canWrite(s.connection.state);
      if (e.key === 'a' && composeRef.current) {
        e.preventDefault();
        composeRef.current.focus();
      } else if (e.key === 's' && im && live && c.autoReply !== 'stopped') void s.stopAutoReply(c.id);
      else if (e.key === 'r' && im && live && c.autoReply === 'stopped') void s.resumeAutoReply(c.id);
      else if (e.key === 'e' && live && c.needsHuman) void s.resolve(c.id);
      // Said, not silent: the agent pressed it expecting something to happen.
      else if (e.key === 'e' && !c.needsHuman) s.noteKey(i18n.t('work.keys.nothingToResolve'));
      else if (e.key === 'h' && c.needsHuman) s.noteKey(i18n.t('work.keys.alreadyQueued'));
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [composeRef]);

  if (!transcript) return <NotShown />;
  const c = transcript.conversation;
  return (
    <section className="transcript" aria-label={t('work.transcript', { name: conversationTitle(c) })} data-testid="transcript">
      <ConversationHeader c={c} />
      <div
        className="transcript-scroll"
        ref={scroller}
        tabIndex={0}
        aria-label={t('work.lines')}
        onScroll={(e) => {
          const el = e.currentTarget;
          atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
        }}
      >
        {transcript.hasEarlier && (
          <button
            className="earlier"
            onClick={() => {
              const el = scroller.current;
              const top = entries[0];
              if (el && top) anchor.current = { height: el.scrollHeight, top: el.scrollTop, first: `${top.kind}-${top.id}` };
              void loadEarlier();
            }}
          >
            {t('transcript.earlier')}
          </button>
        )}
        <ol className="entries">
          {entries.map((e) => (
            <ErrorBoundary key={`${e.kind}-${e.id}`} fallback={() => <BrokenEntry e={e} />}>
              <Entry e={e} mediaOrigins={transcript.mediaOrigins} onUse={canSend ? use : null} />
            </ErrorBoundary>
          ))}
        </ol>
      </div>
      <Compose conversation={c} sendTarget={transcript.sendTarget} composeRef={composeRef} onUse={canSend ? use : null} />
    </section>
  );
}
