import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { conversationTitle, titleWithRef } from '../../../shared/console-display.ts';
import { useConsole } from '../store/index.ts';
import { NO_REQUEST_FILTER, type RequestFilter } from '../store/views-slice.ts';
import type { RequestLogItem } from '../../../shared/console-api.ts';
import { fullTime, shortTime } from '../format.ts';

/** One time, or first–last for a row that counts several requests; the full date and time on hover. */
function TimeSpan({ at, lastAt }: { at: number; lastAt: number }) {
  const { i18n } = useTranslation();
  const lang = i18n.language;
  const first = shortTime(at, lang);
  const last = shortTime(lastAt, lang);
  const title = lastAt === at ? fullTime(at, lang) : `${fullTime(at, lang)} – ${fullTime(lastAt, lang)}`;
  return (
    <time dateTime={new Date(at).toISOString()} title={title}>
      {last === first ? first : `${first}–${last}`}
    </time>
  );
}

/** The schema problems of a validation failure (problem+json `errors`), as the endpoint listed them. */
function fieldErrors(problem: RequestLogItem['problem']): Array<{ path: string; message: string }> {
  const errors = problem?.['errors'];
  if (!Array.isArray(errors)) return [];
  return errors.flatMap((e: unknown) => {
    if (typeof e !== 'object' || e === null) return [];
    const { path, message } = e as Record<string, unknown>;
    return [{ path: typeof path === 'string' ? path : '', message: typeof message === 'string' ? message : JSON.stringify(e) }];
  });
}

function Filters() {
  const { t } = useTranslation();
  const applied = useConsole((s) => s.requestFilter);
  const apply = useConsole((s) => s.setRequestFilter);
  const clients = useConsole((s) => s.clients);
  const [draft, setDraft] = useState<RequestFilter>(applied);
  const field = (key: 'requestId' | 'msgId' | 'since' | 'until') => ({ value: draft[key], onChange: (e: { target: { value: string } }) => setDraft({ ...draft, [key]: e.target.value }) });
  return (
    <form
      className="request-filters"
      aria-label={t('views.requests.filters')}
      onSubmit={(e) => {
        e.preventDefault();
        apply(draft);
      }}
    >
      <label>
        <span>{t('views.requests.requestId')}</span>
        <input type="search" {...field('requestId')} />
      </label>
      <label>
        <span>{t('views.requests.msgId')}</span>
        <input type="search" {...field('msgId')} />
      </label>
      <label>
        <span>{t('views.requests.client')}</span>
        <select
          value={draft.clientId}
          onChange={(e) => {
            // A choice in a list needs no extra click: it applies at once, with the rest of the form.
            const next = { ...draft, clientId: e.target.value };
            setDraft(next);
            apply(next);
          }}
        >
          <option value="">{t('views.requests.allClients')}</option>
          {clients.map((c) => (
            <option key={c.id} value={c.id}>
              {c.id}
            </option>
          ))}
        </select>
      </label>
      {draft.clientId && (
        <label className="with-claims">
          <input
            type="checkbox"
            checked={draft.withClaims}
            onChange={(e) => {
              const next = { ...draft, withClaims: e.target.checked };
              setDraft(next);
              apply(next);
            }}
          />
          {t('views.requests.withClaims')}
        </label>
      )}
      <label>
        <span>{t('views.requests.since')}</span>
        <input type="datetime-local" {...field('since')} />
      </label>
      <label>
        <span>{t('views.requests.until')}</span>
        <input type="datetime-local" {...field('until')} />
      </label>
      <button type="submit">{t('views.requests.apply')}</button>
      <button
        type="button"
        onClick={() => {
          setDraft(NO_REQUEST_FILTER);
          apply(NO_REQUEST_FILTER);
        }}
      >
        {t('views.requests.clear')}
      </button>
    </form>
  );
}

export function RequestLog() {
  const { t } = useTranslation();
  const requests = useConsole((s) => s.requests);
  const onlyFailed = useConsole((s) => s.onlyFailed);
  const setOnlyFailed = useConsole((s) => s.setOnlyFailed);
  const filter = useConsole((s) => s.requestFilter);
  const open = useConsole((s) => s.openConversation);
  const filtered = onlyFailed || Object.values(filter).some(Boolean);
  return (
    <section className="requests" aria-label={t('nav.requests')}>
      <Filters />
      <label>
        <input type="checkbox" checked={onlyFailed} onChange={(e) => setOnlyFailed(e.target.checked)} /> {t('requests.onlyFailed')}
      </label>
      {requests.length === 0 ? (
        <p className="empty">{filtered ? t('views.requests.noMatch') : t('requests.empty')}</p>
      ) : (
        <table className="grid" data-testid="request-log">
          <colgroup>
            <col className="w-time" />
            <col className="w-client" />
            <col className="w-event" />
            <col className="w-ids" />
            <col className="w-num" />
            <col />
            <col className="w-num" />
            <col className="w-conversation" />
          </colgroup>
          <thead>
            <tr>
              <th scope="col">{t('requests.time')}</th>
              <th scope="col">{t('requests.client')}</th>
              <th scope="col">event_type</th>
              <th scope="col">{t('views.requests.ids')}</th>
              <th scope="col">{t('requests.status')}</th>
              <th scope="col">{t('requests.code')}</th>
              <th scope="col">{t('requests.latency')}</th>
              <th scope="col">{t('views.requests.conversation')}</th>
            </tr>
          </thead>
          <tbody>
            {requests.map((r) => {
              const errors = fieldErrors(r.problem);
              return (
                <tr key={r.id} className={r.status >= 400 ? 'failed' : ''} data-request={r.requestId}>
                  <td>
                    <TimeSpan at={r.at} lastAt={r.lastAt} />
                  </td>
                  {r.verified ? (
                    <td className="clip" title={r.clientId ?? ''}>
                      {r.clientId ?? '-'}
                    </td>
                  ) : (
                    <td className="claim" title={t('views.requests.unverifiedHint')}>
                      {/* Anyone can send these, naming any client: never shown as the client's own. */}
                      <span className="badge warn" data-testid="unverified">
                        {r.claimedClientId === null ? t('views.requests.unverified') : t('views.requests.unverifiedClaim', { client: r.claimedClientId })}
                      </span>
                    </td>
                  )}
                  <td>{r.eventType ?? '-'}</td>
                  <td className="ids clip" title={`request_id ${r.requestId}${r.msgId ? ` · msg_id ${r.msgId}` : ''}`}>
                    <code>{r.requestId}</code>
                    {r.msgId && <code>{r.msgId}</code>}
                  </td>
                  <td>
                    {r.status}
                    {r.count > 1 && <strong className="count" data-testid="request-count"> ×{r.count}</strong>}
                  </td>
                  <td className="problem">
                    {r.code ?? ''}
                    {r.problem && <small className="detail"> {String(r.problem['detail'] ?? '')}</small>}
                    {errors.length > 0 && (
                      <ul className="field-errors" aria-label={t('views.requests.fieldErrors')} data-testid="field-errors">
                        {errors.map((e, i) => (
                          <li key={i}>
                            <code>{e.path || '(body)'}</code> {e.message}
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                  <td>{r.latencyMs.toFixed(1)}</td>
                  <td>
                    {r.conversationId && (
                      <button
                        className="link clip"
                        onClick={() => open(r.conversationId!)}
                        title={r.conversation ? titleWithRef(r.conversation) : r.conversationId}
                        aria-label={t('views.requests.openConversation', { id: r.conversation ? conversationTitle(r.conversation) : r.conversationId })}
                      >
                        {r.conversation ? conversationTitle(r.conversation) : t('views.requests.open')}
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
