import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { DELIVERY_VIEW_STATES, type DeliveryItem } from '../../../shared/console-api.ts';
import { displayName } from './conversation-name.ts';
import { fullDate, useNow, When } from './relative-time.tsx';

function Row({ d, name, now }: { d: DeliveryItem; name: string; now: number }) {
  const { t, i18n } = useTranslation();
  const open = useConsole((s) => s.openConversation);
  const retry = useConsole((s) => s.retryDeliveries);
  const status = d.lastStatus !== null && !(d.lastError ?? '').includes(String(d.lastStatus)) ? `HTTP ${d.lastStatus}` : null;
  const error = [status, d.lastError].filter(Boolean).join(' · ');
  return (
    <tr data-delivery={d.id} className={d.state}>
      <td>
        <span className={`badge ${d.state === 'dead' ? 'stopped' : 'paused'}`}>{t(`views.deliveries.state.${d.state}`)}</span>
      </td>
      <td className="clip">
        <button className="link" onClick={() => open(d.conversationId)} title={t('views.deliveries.open', { id: `${name} (${d.conversationId})` })}>
          {name}
        </button>
      </td>
      <td className="clip" title={d.clientId}>
        {d.clientId}
      </td>
      <td>{t(`views.deliveries.kind.${d.kind}`)}</td>
      <td>{d.attempts}</td>
      <td className="clip" title={`${error} · ${d.url}`}>
        {error || '-'}
      </td>
      <td>
        {d.state === 'retrying' && d.nextAttemptAt !== null ? (
          <time dateTime={new Date(d.nextAttemptAt).toISOString()} title={fullDate(d.nextAttemptAt, i18n.language)}>
            {t('views.deliveries.next', { time: new Date(d.nextAttemptAt).toLocaleTimeString(i18n.language) })}
          </time>
        ) : (
          <When at={d.createdAt} now={now} />
        )}
      </td>
      <td>
        {d.state === 'dead' && (
          <button className="mini" onClick={() => void retry([d.id])}>
            {t('views.deliveries.retry')}
          </button>
        )}
      </td>
    </tr>
  );
}

/** Every delivery that needs attention, across conversations: retrying ones and dead ones. */
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
  const [retried, setRetried] = useState<number | null>(null);
  const dead = items.filter((d) => d.state === 'dead').length;
  const conversations = useConsole((s) => s.conversations);
  // The loaded list knows who each conversation is with; one outside it shows its id.
  const names = useMemo(() => {
    const wanted = new Set(items.map((d) => d.conversationId));
    return new Map(conversations.filter((c) => wanted.has(c.id)).map((c) => [c.id, displayName(c)]));
  }, [items, conversations]);
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
                onClick={() => {
                  const states = on ? filter.states.filter((s) => s !== state) : [...filter.states, state];
                  // Neither state shown means nothing to see: turning the last one off shows both.
                  setFilter({ states: states.length ? states : [...DELIVERY_VIEW_STATES] });
                }}
              >
                {t(`views.deliveries.state.${state}`)}
              </button>
            );
          })}
        </div>
        <button onClick={() => void load()}>{t('views.deliveries.refresh')}</button>
        {filter.states.includes('dead') && (
          <button disabled={dead === 0} onClick={() => void retry().then(setRetried)}>
            {t('views.deliveries.retryAllDead', { count: dead })}
          </button>
        )}
        <span role="status" className="muted">
          {retried !== null && t('views.deliveries.retried', { count: retried })}
        </span>
      </div>
      {loaded && items.length === 0 ? (
        <p className="empty">{t('views.deliveries.empty')}</p>
      ) : (
        <table className="grid" data-testid="deliveries">
          <colgroup>
            <col className="w-state" />
            <col />
            <col className="w-client" />
            <col className="w-kind" />
            <col className="w-num" />
            <col />
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
              <th scope="col">{t('views.deliveries.col.error')}</th>
              <th scope="col">{t('views.deliveries.col.when')}</th>
              <th scope="col">{t('views.deliveries.col.action')}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((d) => (
              <Row key={d.id} d={d} name={names.get(d.conversationId) ?? d.conversationId} now={now} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
