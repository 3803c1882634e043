import { memo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { DeliveryActions } from './DeliveryActions.tsx';
import type { TFunction } from 'i18next';
import { groupsUnreachable, replySettingsOf } from './ReplySettingsSummary.tsx';
import { useConsole } from '../store/index.ts';
import type { DeliveryWait, TranscriptEntry } from '../../../shared/console-api.ts';
import { Mentions, Quote } from './MessageRefs.tsx';
import { translateNote } from '../i18n/server-notes.ts';
import { fullTime, shortTime, speakerOf } from '../format.ts';
import { Attachments } from './Attachments.tsx';
import { Avatar } from './Avatar.tsx';
import { commandOf, commandText } from './command-text.ts';
import { sourceUse } from '../../../shared/console-display.ts';
import { BUILTIN_ENGINE } from '../../../shared/engine-config.ts';
import { retryResultText } from './Deliveries.tsx';
import { matchScore } from './match-score.ts';
import { offersWhole, WholeMessage } from './WholeMessage.tsx';
import { NoteEntry } from './NoteEntry.tsx';
import { TeachButton } from './TeachDialog.tsx';

type Decision = NonNullable<TranscriptEntry['decision']>;
type Tone = 'ok' | 'warn' | 'bad' | 'muted' | 'neutral';

/**
 * A why-line takes the colour of where the message ended up, not of the first decision:
 * "scheduled · cancelled" is not a success. Not scheduled at all is by design (muted).
 */
const OUTCOME_TONE: Record<string, Tone> = { answered: 'ok', handoff: 'warn', stale: 'warn', cancelled: 'muted', pending: 'neutral' };

/** A reply that was made but has not reached the customer: what its delivery is doing instead. */
export type Undelivered = 'sending' | 'retrying' | 'dead' | 'cancelled';
const UNDELIVERED_TONE: Record<Undelivered, Tone> = { sending: 'neutral', retrying: 'warn', dead: 'bad', cancelled: 'warn' };

/**
 * "Answered" means the customer got it only once the reply's delivery is sent: a stop or a
 * takeover cancels a reply made but not yet delivered, and a receiver can refuse it for good.
 */
export function undelivered(d: Decision): Undelivered | null {
  if ((d.outcome !== 'answered' && d.outcome !== 'handoff') || !d.delivery) return null;
  const state = d.delivery.state;
  if (state === 'pending') return d.delivery.attempts > 0 ? 'retrying' : 'sending';
  return state === 'dead' || state === 'cancelled' ? state : null;
}

export function whyTone(d: Decision): Tone {
  if (!d.scheduled) return 'muted';
  const missing = undelivered(d);
  if (missing) return UNDELIVERED_TONE[missing];
  return d.outcome === null ? 'neutral' : (OUTCOME_TONE[d.outcome] ?? 'neutral');
}

/** pending after a failed attempt is "retrying": what the operator needs to tell apart. */
export function deliveryState(d: NonNullable<TranscriptEntry['delivery']>): string {
  return d.state === 'pending' && d.attempts > 0 ? 'retrying' : d.state;
}

type Waiting = { state: string } & Partial<DeliveryWait>;

/**
 * A pending delivery held behind an earlier undelivered reply of its conversation (in order per
 * conversation, protocol section 7): what that one is doing, so "waiting" says why.
 */
export function heldBehind(d: Waiting): 'failing' | 'sending' | null {
  if (d.state !== 'pending' || !d.behind) return null;
  return d.behind.failing ? 'failing' : 'sending';
}

/** What a line shows of a delivery's wait changed: its next try, or what it waits behind. */
const waitKey = (d: Partial<DeliveryWait> | null | undefined): string =>
  d ? `${d.nextAttemptAt ?? ''}:${d.behind?.id ?? ''}:${d.behind?.failing ?? ''}:${d.behind?.nextAttemptAt ?? ''}` : '';

// The parts of a line take `t` and the language from the line: a transcript shows hundreds of
// them, and one translation hook per line (not per part) keeps opening a big one fast.

/** A time as the operator reads it, with the machine-readable instant and the full date on hover. */
/**
 * When the customer wrote it, if that was over a minute before it arrived: a message the service
 * calls too old to answer shows the time that makes it so, not only its late arrival.
 */
export function writtenAt(e: Pick<TranscriptEntry, 'kind' | 'role' | 'at' | 'messageInfo'>): number | null {
  const ts = e.kind === 'message' && e.role === 'customer' ? e.messageInfo?.['create_timestamp'] : undefined;
  if (typeof ts !== 'number' || !Number.isFinite(ts)) return null;
  const at = ts * 1000;
  return e.at - at > 60_000 ? at : null;
}

export function When({ at, lang }: { at: number; lang: string }) {
  return (
    <time dateTime={new Date(at).toISOString()} title={fullTime(at, lang)}>
      {shortTime(at, lang)}
    </time>
  );
}

/**
 * One state per line, where the message ended up: "Answered by the bot", "Reply scheduled", "Bot reply
 * not delivered: cancelled" (it read "Scheduled for a reply · answered", two states). A message not
 * scheduled says why; a handoff keeps its state and adds what became of its reply's delivery.
 */
function decisionText(d: Decision, t: TFunction, lang: string): string {
  if (!d.scheduled) return t(`transcript.reason.${d.reason}`);
  const missing = undelivered(d);
  const held = missing === 'sending' && d.delivery ? heldBehind(d.delivery) : null;
  const time = held ? shortTime(d.delivery!.behind!.nextAttemptAt, lang) : '';
  if (missing && d.outcome === 'answered') {
    return held ? t(`transcript.decision.held.${held}`, { time }) : t(`transcript.decision.undelivered.${missing}`, { count: d.delivery?.attempts ?? 0 });
  }
  const state = t(`transcript.decision.${d.outcome ?? 'pending'}`, { defaultValue: d.outcome ?? '' });
  if (!missing) return state;
  return `${state} · ${held ? t(`deliveryActions.reply.${held}`, { time }) : t(`transcript.undelivered.${missing}`, { count: d.delivery?.attempts ?? 0 })}`;
}

function WhyLine({ d, t, lang }: { d: Decision; t: TFunction; lang: string }) {
  const outcome = d.outcome ?? (d.scheduled ? 'pending' : 'not_scheduled');
  const missing = undelivered(d);
  const next = missing === 'retrying' ? d.delivery?.nextAttemptAt : null;
  const why = missing === 'cancelled' || missing === 'dead' ? d.delivery?.lastError : null;
  return (
    <div className={`why tone-${whyTone(d)}`} data-testid="why" data-outcome={outcome} data-delivery={missing ?? undefined}>
      {decisionText(d, t, lang)}
      {typeof next === 'number' && ` (${t('deliveryActions.nextTry', { time: shortTime(next, lang) })})`}
      {why && <small> ({translateNote(why)})</small>}
      {d.note && <small> ({translateNote(d.note)})</small>}
      {d.reason === 'not_mentioned' && <NoBotIdsHint t={t} />}
    </div>
  );
}

/** "Not mentioned" on a client that has no bound account and no bot ids: no mention could wake it. */
function NoBotIdsHint({ t }: { t: TFunction }) {
  const unreachable = useConsole((s) => {
    const client = s.clients.find((c) => c.id === s.transcript?.conversation.clientId);
    return client !== undefined && groupsUnreachable(replySettingsOf(client));
  });
  return unreachable ? <small data-testid="no-bot-ids"> ({t('transcript.noBotIds')})</small> : null;
}

/**
 * A reply's delivery: its state, why it waits (its next try, or the earlier reply it is held
 * behind), and for a retrying or dead one Retry now / Retry and Cancel. A retried one says
 * "sending…" until its attempt is recorded, then how that went.
 */
function Delivery({ d, t, lang }: { d: NonNullable<TranscriptEntry['delivery']>; t: TFunction; lang: string }) {
  const retried = useConsole((s) => s.retried[d.id]);
  const state = deliveryState(d);
  const sending = retried?.result.kind === 'sending';
  const held = heldBehind(d);
  const result = retried && !sending ? retryResultText(retried.result, t) : null;
  const act = state === 'retrying' || state === 'dead';
  let text: string;
  if (sending) text = t('deliveryActions.lineSending');
  else if (held) text = t(`deliveryActions.held.${held}`, { time: shortTime(d.behind!.nextAttemptAt, lang) });
  else text = t(`work.delivery.${state}`, { count: d.attempts, defaultValue: t('work.delivery.other', { state, count: d.attempts }) });
  const next = !sending && state === 'retrying' && typeof d.nextAttemptAt === 'number' ? d.nextAttemptAt : null;
  return (
    <div className={`delivery state-${state}`} data-testid="delivery" data-state={state} data-held={held ?? undefined} data-retry={retried?.result.kind}>
      {text}
      {!sending && d.lastError && <small> · {translateNote(d.lastError)}</small>}
      {next !== null && (
        <small data-testid="next-try" title={fullTime(next, lang)}>
          {' '}
          · {t('deliveryActions.nextTry', { time: shortTime(next, lang) })}
        </small>
      )}
      {result && (
        <small className="retry-result" data-testid="retry-result">
          {' '}
          · {result}
        </small>
      )}
      {act && <DeliveryActions id={d.id} retrying={state === 'retrying'} sending={sending} retryLabel={t('transcript.retry')} className="delivery-buttons" />}
    </div>
  );
}

function Sources({ e, t }: { e: TranscriptEntry; t: TFunction }) {
  const open = (id: number): void => useConsole.getState().openKbEntry(id);
  const use = sourceUse(e);
  if (!use) return null;
  // A handoff's entries are the nearest misses, not where a reply came from: said so, and muted.
  const label = use.kind === 'closest' && e.engine !== BUILTIN_ENGINE ? 'unused' : use.kind;
  return (
    <div className={`why sources${use.kind === 'closest' ? ' tone-muted' : ''}`} data-testid="sources" data-use={use.kind}>
      {t(`work.entry.sourcesKind.${label}`, { engine: e.engine ?? '' })}{' '}
      {use.sources.map((s) => (
        <button key={s.id} type="button" className="link" onClick={() => open(s.id)} title={t('work.entry.openKb')}>
          {s.question ? `“${s.question}”` : `#${s.id}`} <small className="match">{t('kb.match', { score: matchScore(s.score) })}</small>
        </button>
      ))}
    </div>
  );
}

type EntryProps = { e: TranscriptEntry; mediaOrigins: readonly string[]; onUse: ((text: string) => void) | null };

/**
 * Every reload of the open transcript brings new objects for the same lines; a line re-renders
 * only when something it shows changed (a message's text and attachments never change).
 */
function sameLine(a: EntryProps, b: EntryProps): boolean {
  const x = a.e;
  const y = b.e;
  return (
    a.onUse === b.onUse &&
    a.mediaOrigins.join(' ') === b.mediaOrigins.join(' ') &&
    x.kind === y.kind &&
    x.id === y.id &&
    x.msgId === y.msgId &&
    x.content === y.content &&
    x.at === y.at &&
    x.speakerName === y.speakerName &&
    x.quoted?.content === y.quoted?.content &&
    x.quoted?.speakerName === y.quoted?.speakerName &&
    (x.mentions ?? []).map((m) => m.name ?? m.id).join() === (y.mentions ?? []).map((m) => m.name ?? m.id).join() &&
    x.handoff === y.handoff &&
    x.cause === y.cause &&
    x.instruction === y.instruction &&
    x.operator?.name === y.operator?.name &&
    (x.sources ?? []).map((s) => `${s.id}:${s.score}:${s.question ?? ''}`).join() === (y.sources ?? []).map((s) => `${s.id}:${s.score}:${s.question ?? ''}`).join() &&
    x.decision?.scheduled === y.decision?.scheduled &&
    x.decision?.reason === y.decision?.reason &&
    x.decision?.outcome === y.decision?.outcome &&
    x.decision?.note === y.decision?.note &&
    x.decision?.delivery?.state === y.decision?.delivery?.state &&
    x.decision?.delivery?.attempts === y.decision?.delivery?.attempts &&
    x.decision?.delivery?.lastError === y.decision?.delivery?.lastError &&
    waitKey(x.decision?.delivery) === waitKey(y.decision?.delivery) &&
    x.delivery?.state === y.delivery?.state &&
    x.delivery?.attempts === y.delivery?.attempts &&
    x.delivery?.lastError === y.delivery?.lastError &&
    waitKey(x.delivery) === waitKey(y.delivery) &&
    x.stored?.bytes === y.stored?.bytes &&
    x.stored?.cut.join() === y.stored?.cut.join()
  );
}

/** One line of the transcript: who (avatar, name), when, what, and why it was or was not answered. */
export const Entry = memo(function Entry({ e, mediaOrigins, onUse }: EntryProps) {
  const { t, i18n } = useTranslation();
  const lang = i18n.language;
  // The whole stored message_info, once the operator asked for it: it shows what the line cut.
  const [whole, setWhole] = useState<Record<string, unknown> | null>(null);
  const info = whole ?? e.messageInfo;
  const cut = whole ? [] : (e.stored?.cut ?? []);
  const shownQuote = info?.['quote'] as { content?: unknown; msg_id?: unknown } | undefined;
  const quote = shownQuote && cut.includes('quote.content') && typeof shownQuote.content === 'string' ? { ...shownQuote, content: `${shownQuote.content}…` } : shownQuote;
  const who = speakerOf(e);
  const ai = e.role === 'ai' && !e.operator;
  const name = e.kind === 'suggestion' ? t('transcript.suggestion') : ai ? t('transcript.role.ai') : (who?.name ?? t(`transcript.role.${e.role}`));
  const role = e.operator ? t('work.entry.operator') : e.kind === 'message' ? t(`transcript.role.${e.role}`) : e.engine;
  const idHint = who && who.name !== e.speaker && e.speaker ? e.speaker : null;
  const written = writtenAt(e);
  if (e.kind === 'note') return <NoteEntry e={e} t={t} lang={lang} />;
  if (e.role === 'command') {
    return (
      <li className="entry command" data-entry={e.msgId}>
        <div className="meta">
          {t('transcript.role.command')} · <When at={e.at} lang={lang} />
        </div>
        <div className="content">
          {commandText(t, commandOf(e.content, e.messageInfo))}
        </div>
      </li>
    );
  }
  return (
    <li className={`entry ${e.kind} ${e.role}${e.operator ? ' operator' : ''}`} data-entry={e.msgId}>
      <Avatar id={ai ? 'ai' : (who?.id ?? e.role)} name={ai ? 'AI' : name} />
      <div className="bubble">
        <div className="meta">
          <strong className="who ellipsis" title={idHint ? `${name} (${idHint})` : name}>
            {name}
          </strong>
          {idHint && <span className="id ellipsis">{idHint}</span>}
          {role && role !== name && <span className="role">{role}</span>}
          {/* assist_dialog appends the message it asks about (protocol section 6): the integration asked for a suggestion, not the customer twice. */}
          {e.kind === 'message' && e.messageInfo?.['event_type'] === 'assist_dialog' && <span className="role">{t('transcript.viaAssist')}</span>}
          <When at={e.at} lang={lang} />
          {written !== null && (
            <span className="written">
              {t('transcript.written')} <When at={written} lang={lang} />
            </span>
          )}
        </div>
        {e.kind === 'suggestion' && e.instruction && <div className="instruction">{t('work.suggest.instruction', { text: e.instruction })}</div>}
        {e.kind === 'suggestion' && e.instruction && e.engine === BUILTIN_ENGINE && <div className="why tone-muted">{t('work.suggest.instructionIgnored')}</div>}
        {quote && <Quote quote={quote} quoted={e.quoted ?? null} t={t} />}
        {/* A suggestion the engine could not make carries the fallback text: not something to send. */}
        <div className="content">{e.kind === 'suggestion' && e.handoff ? <em>{t('transcript.noSuggestion')}</em> : e.content}</div>
        {e.mentions && <Mentions mentions={e.mentions} />}
        <Attachments info={info} cut={cut} mediaOrigins={mediaOrigins} />
        {e.kind === 'message' && offersWhole(e.stored) && <WholeMessage messageId={e.id} bytes={e.stored!.bytes} cut={cut.length > 0} onLoaded={setWhole} />}
        {/* Staff and the AI are not asked anything: "not answered" on their lines is noise. */}
        {e.decision && e.decision.reason !== 'sender_not_customer' && <WhyLine d={e.decision} t={t} lang={lang} />}
        <Sources e={e} t={t} />
        {e.handoff && (
          <div className="why tone-warn">
            {t('transcript.handoff')}
            {e.cause ? ` (${translateNote(e.cause)})` : ''}
          </div>
        )}
        {!e.handoff && e.cause && <div className="why tone-muted">{translateNote(e.cause)}</div>}
        {e.delivery && <Delivery d={e.delivery} t={t} lang={lang} />}
        <TeachButton e={e} />
        {e.kind === 'suggestion' && !e.handoff && onUse && (
          <button type="button" className="mini" onClick={() => onUse(e.content)}>
            {t('work.suggest.use')}
          </button>
        )}
      </div>
    </li>
  );
}, sameLine);
