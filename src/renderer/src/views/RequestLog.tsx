import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';

/** One time, or first–last for a row that counts several requests. */
function timeSpan(at: number, lastAt: number): string {
  const first = new Date(at).toLocaleTimeString();
  const last = new Date(lastAt).toLocaleTimeString();
  return last === first ? first : `${first}–${last}`;
}

export function RequestLog() {
  const { t } = useTranslation();
  const requests = useConsole((s) => s.requests);
  const onlyFailed = useConsole((s) => s.onlyFailed);
  const setOnlyFailed = useConsole((s) => s.setOnlyFailed);
  return (
    <section className="requests" aria-label={t('nav.requests')}>
      <label>
        <input type="checkbox" checked={onlyFailed} onChange={(e) => setOnlyFailed(e.target.checked)} /> {t('requests.onlyFailed')}
      </label>
      {requests.length === 0 ? (
        <p className="empty">{t('requests.empty')}</p>
      ) : (
        <table data-testid="request-log">
          <thead>
            <tr>
              <th>{t('requests.time')}</th>
              <th>{t('requests.client')}</th>
              <th>event_type</th>
              <th>{t('requests.status')}</th>
              <th>{t('requests.code')}</th>
              <th>{t('requests.latency')}</th>
            </tr>
          </thead>
          <tbody>
            {requests.map((r) => (
              <tr key={r.id} className={r.status >= 400 ? 'failed' : ''} title={r.problem ? String(r.problem['detail'] ?? '') : r.requestId}>
                <td>{timeSpan(r.at, r.lastAt)}</td>
                <td>{r.clientId ?? '-'}</td>
                <td>{r.eventType ?? '-'}</td>
                <td>
                  {r.status}
                  {r.count > 1 && <strong className="count" data-testid="request-count"> ×{r.count}</strong>}
                </td>
                <td>
                  {r.code ?? ''}
                  {r.problem && <small className="detail"> {String(r.problem['detail'] ?? '')}</small>}
                </td>
                <td>{r.latencyMs.toFixed(1)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
