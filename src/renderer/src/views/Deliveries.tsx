import { useTranslation } from 'react-i18next';
import { DeliveryActions } from './DeliveryActions.tsx';
import { useConsole } from '../store/index.ts';
import { DELIVERY_PROBLEM_STATES, DELIVERY_VIEW_STATES, type DeliveryItem, type DeliveryViewState } from '../../../shared/console-api.ts';
import { assertNever } from '../../../shared/assert-never.ts';
import { translateNote } from '../i18n/server-notes.ts';
import { conversationTitle, titleWithRef } from '../../../shared/console-display.ts';
import { fullTime, shortTime } from '../format.ts';
import { useNow, When } from './relative-time.tsx';
import { deliveryStatus, maskUrl, shortUrl, type DeliveryStatus } from '../../../shared/console-display.ts';
import { CopyButton } from './SecretDialog.tsx';
import { WriteButton } from './ConnectionStatus.tsx';
import type { CancelNotice, Retried, RetryResult } from '../store/deliveries-slice.ts';
import type { TFunction } from 'i18next';
import './deliveries.css';

function badgeOf(state: DeliveryViewState): string {
  switch (state) {
    case 'dead':
      return 'stopped';
    case 'retrying':
      return 'paused';
    case 'cancelled':
      return 'muted';
    default:
      return assertNever(state, 'delivery state');
  }
}

/** The last error in words, or for a cancelled delivery why it was cancelled; its status has a column of its own. */
function problemOf(d: DeliveryItem): string {
  return d.lastError ? translateNote(d.lastError) : d.lastStatus !== null ? `HTTP ${d.lastStatus}` : '';
}

/** "HTTP 500", "HTTP 410", "refused", "timeout": what failed, readable at any width. */
export function statusText(status: DeliveryStatus, t: TFunction): string {
  if (status === null) return '-';
  return 'http' in status ? `HTTP ${status.http}` : t(`views.deliveries.status.${status.kind}`);
}

/** A retried delivery's result in words ("Retried: failed again (HTTP 410)"); null while it is being sent or no longer watched. */
export function retryResultText(result: RetryResult, t: TFunction): string | null {
  switch (result.kind) {
    case 'delivered':
    case 'cancelled':
      return t(`deliveryActions.result.${result.kind}`);
    case 'failed':
      return t('deliveryActions.result.failed', { why: statusText(result.status, t) });
    case 'sending':
    case 'waiting':
      return null;
    default:
      return assertNever(result, 'retry result');
  }
}

/**
 * What the last retry came to: "3 deliveries queued again. Sending…" until their attempts are
 * recorded, then "Retried 3: 1 delivered, 2 failed again (HTTP 410)".
 */
export function retrySummary(results: ReadonlyArray<Retried | undefined>, t: TFunction): string {
  const count = results.length;
  const of = (kind: RetryResult['kind']) => results.filter((r) => r?.result.kind === kind);
  const sending = of('sending').length;
  if (count === 0) return t('views.deliveries.retried', { count });
  if (sending === count) return t('deliveryActions.queuedSending', { count });
  const failed = of('failed').map((r) => statusText((r!.result as Extract<RetryResult, { kind: 'failed' }>).status, t));
  const parts = [
    of('delivered').length ? t('deliveryActions.part.delivered', { count: of('delivered').length }) : null,
    failed.length ? t('deliveryActions.part.failed', { count: failed.length, why: [...new Set(failed)].join(', ') }) : null,
    of('cancelled').length ? t('deliveryActions.part.cancelled', { count: of('cancelled').length }) : null,
    sending + of('waiting').length ? t('deliveryActions.part.waiting', { count: sending + of('waiting').length }) : null,
  ].filter((p): p is string => p !== null);
  return t('deliveryActions.summary', { count, parts: parts.join(t('deliveryActions.separator')) });
}

/** The status line after a Cancel: once the try it could not call back is recorded, how that try ended. */
export function cancelText(n: CancelNotice, t: TFunction): string {
  if (!n.tryOnTheWire) return t('deliveryActions.cancelled');
  const outcome = n.outcome;
  // The outcome comes later, maybe after other actions: it names whose reply it is about.
  const about = (text: string): string => (n.who ? t('deliveryActions.about', { who: n.who, text }) : text);
  if (outcome === null) return t('deliveryActions.cancelledOnTheWire');
  switch (outcome.kind) {
    case 'delivered':
      return about(t('deliveryActions.cancelledTryDelivered'));
    case 'failed':
      return about(t('deliveryActions.cancelledTryFailed', { why: statusText(outcome.status, t) }));
    case 'sending':
    case 'cancelled':
    case 'waiting':
      return t('deliveryActions.cancelledOnTheWire');
    default:
      return assertNever(outcome, 'cancel outcome');
  }
}

function Row({ d, now }: { d: DeliveryItem; now: number }) {
  // The service names who the reply is for, as the list names the conversation; its id on hover.
  const name = d.conversation ? conversationTitle(d.conversation) : d.conversationId;
  const full = d.conversation ? titleWithRef(d.conversation) : d.conversationId;
  const { t, i18n } = useTranslation();
  const open = useConsole((s) => s.openConversation);
  const retried = useConsole((s) => s.retried[d.id]);
  const problem = problemOf(d);
  // Retried: "Sending…" until its attempt is recorded, then the state it is in, marked if it failed again.
  const sending = retried?.result.kind === 'sending';
  const again = retried?.result.kind === 'failed' ? { text: retryResultText(retried.result, t)!, why: statusText(retried.result.status, t) } : null;
  return (
    <tr data-delivery={d.id} className={d.state} data-retry={retried?.result.kind}>
      <td>
        {sending ? (
          <span className="badge sending" data-testid="delivery-sending">
            {t('deliveryActions.sending')}
          </span>
        ) : (
          <span className={`badge ${badgeOf(d.state)}`}>{t(`views.deliveries.state.${d.state}`)}</span>
        )}
        {again && (
          <span className="badge stopped retry-result" title={again.text} data-testid="retry-result">
            {t('deliveryActions.failedAgain')}
            <span className="sr-only"> ({again.why})</span>
          </span>
        )}
      </td>
      <td className="clip">
        <button className="link" onClick={() => open(d.conversationId)} title={t('views.deliveries.open', { id: full })}>
          {name}
        </button>
        {/* A group has many members: the row says which one the reply answers. */}
        {d.conversation?.groupId && d.to && (
          <small className="to" title={d.to.id} data-testid="delivery-to">
            {' '}
            {t('views.deliveries.to', { name: d.to.name ?? d.to.id })}
          </small>
        )}
      </td>
      <td className="clip" title={d.clientId}>
        {d.clientId}
      </td>
      <td className="clip">{t(`views.deliveries.kind.${d.kind}`)}</td>
      <td>{d.attempts}</td>
      <td className="status" data-testid="delivery-status">
        {statusText(deliveryStatus(d), t)}
      </td>
      <td title={problem} data-testid="delivery-problem">
        {/* Why it failed decides whether to retry: up to three lines, not one cut short. */}
        <span className="clamp3">{problem || '-'}</span>
      </td>
      <td className="url">
        {/* The query's values may be a token: masked here and on hover; Copy gives the whole URL. */}
        <span className="clip" title={maskUrl(d.url)} data-testid="delivery-url">
          {shortUrl(d.url)}
        </span>
        <CopyButton text={d.url} what={t('views.deliveries.col.url')} testId="copy-delivery-url" />
      </td>
      <td>
        {d.state === 'retrying' && d.nextAttemptAt !== null ? (
          <time dateTime={new Date(d.nextAttemptAt).toISOString()} title={fullTime(d.nextAttemptAt, i18n.language)}>
            {t('views.deliveries.next', { time: shortTime(d.nextAttemptAt, i18n.language, now) })}
          </time>
        ) : (
          <When at={d.createdAt} now={now} />
        )}
      </td>
      <td>
        {d.state !== 'cancelled' && <DeliveryActions id={d.id} retrying={d.state === 'retrying'} sending={sending} retryLabel={t('views.deliveries.retry')} className="delivery-actions" who={name} />}
      </td>
    </tr>
  );
}

/** Deliveries across conversations: those that need attention (retrying, dead), and on request the cancelled ones. */
export function Deliveries() {
  const { t } = useTranslation();
  const items = useConsole((s) => s.deliveries);
  const loaded = useConsole((s) => s.deliveriesLoaded);
  const filter = useConsole((s) => s.deliveryFilter);
  const setFilter = useConsole((s) => s.setDeliveryFilter);
  const load = useConsole((s) => s.loadDeliveries);
  const retry = useConsole((s) => s.retryDeliveries);
  const clients = useConsole((s) => s.clients);
  const now = useNow();
  const notice = useConsole((s) => s.deliveryNotice);
  const results = useConsole((s) => s.retried);
  const dead = items.filter((d) => d.state === 'dead').length;
  const problemsOnly = filter.states.every((s) => DELIVERY_PROBLEM_STATES.includes(s));
  return (
    <section className="admin deliveries" aria-labelledby="deliveries-title">
      <header className="view-head">
        <h2 id="deliveries-title">{t('views.deliveries.title')}</h2>
        <p className="muted">{t('views.deliveries.intro')}</p>
      </header>
      <div className="row">
        <select aria-label={t('views.deliveries.client')} value={filter.clientId ?? ''} onChange={(e) => setFilter({ clientId: e.target.value || undefined })}>
          <option value="">{t('views.deliveries.allClients')}</option>
          {clients.map((c) => (
            <option key={c.id} value={c.id}>
              {c.id}
            </option>
          ))}
        </select>
        <div className="chips" role="group" aria-label={t('views.deliveries.states')}>
          {DELIVERY_VIEW_STATES.map((state) => {
            const on = filter.states.includes(state);
            return (
              <button
                key={state}
                className={on ? 'chip on' : 'chip'}
                aria-pressed={on}
                title={state === 'cancelled' ? t('views.deliveries.cancelledWhy') : undefined}
                onClick={() => {
                  const states = on ? filter.states.filter((s) => s !== state) : [...filter.states, state];
                  // No state shown means nothing to see: turning the last one off goes back to those that need attention.
                  setFilter({ states: states.length ? states : [...DELIVERY_PROBLEM_STATES] });
                }}
              >
                {t(`views.deliveries.state.${state}`)}
              </button>
            );
          })}
        </div>
        <button onClick={() => void load({ fresh: true })}>{t('views.deliveries.refresh')}</button>
        {filter.states.includes('dead') && (
          <WriteButton disabled={dead === 0} onClick={() => void retry()}>
            {t('views.deliveries.retryAllDead', { count: dead })}
          </WriteButton>
        )}
        <span role="status" className="muted" data-testid="deliveries-said">
          {/* A retry's outcome as its deliveries settle: the agent learns how it went without looking row by row. */}
          {notice?.kind === 'cancel' && cancelText(notice, t)}
          {notice?.kind === 'retry' && retrySummary(notice.ids.map((id) => results[id]), t)}
        </span>
      </div>
      {loaded && items.length === 0 ? (
        <p className="empty">{problemsOnly ? t('views.deliveries.empty') : t('views.deliveries.emptyStates')}</p>
      ) : (
        <table className="grid" data-testid="deliveries">
          <colgroup>
            <col className="w-state" />
            <col />
            <col className="w-client" />
            <col className="w-kind" />
            <col className="w-num" />
            <col className="w-status" />
            <col />
            <col className="w-url" />
            <col className="w-when" />
            <col className="w-action" />
          </colgroup>
          <thead>
            <tr>
              <th scope="col">{t('views.deliveries.col.state')}</th>
              <th scope="col">{t('views.deliveries.col.conversation')}</th>
              <th scope="col">{t('views.deliveries.col.client')}</th>
              <th scope="col">{t('views.deliveries.col.kind')}</th>
              <th scope="col">{t('views.deliveries.col.attempts')}</th>
              <th scope="col">{t('views.deliveries.col.status')}</th>
              <th scope="col">{t('views.deliveries.col.error')}</th>
              <th scope="col">{t('views.deliveries.col.url')}</th>
              <th scope="col">{t('views.deliveries.col.when')}</th>
              <th scope="col">{t('views.deliveries.col.action')}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((d) => (
              <Row key={d.id} d={d} now={now} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
