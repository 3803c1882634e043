import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { Chart, sharedRange } from './Chart.tsx';

export function Dashboard() {
  const { t } = useTranslation();
  const stats = useConsole((s) => s.stats);
  const loadStats = useConsole((s) => s.loadStats);
  const openDeliveries = useConsole((s) => s.openDeliveries);
  const goTo = useConsole((s) => s.goTo);

  useEffect(() => {
    void loadStats();
    const timer = setInterval(() => void loadStats(), 5000);
    return () => clearInterval(timer);
  }, [loadStats]);

  if (!stats) return <section className="admin">{t('dashboard.loading')}</section>;
  const outboxTimes = stats.outboxDepth.map(([time]) => time);
  // The outbox keeps hours of samples; the minute series cover only the window. All share one axis.
  const range = sharedRange(stats.minutes[0] ?? 0, [
    { times: stats.minutes, values: stats.requests.map((n, i) => n + (stats.replies[i] ?? 0) + (stats.handoffs[i] ?? 0) + (stats.deliveryFailures[i] ?? 0)) },
    { times: outboxTimes },
  ]);
  return (
    <section className="admin dashboard" aria-label={t('nav.dashboard')}>
      {/* Each tile opens the list behind its number. "Waiting" deliveries that need a look are the
          retrying ones: a first attempt in flight leaves the outbox within seconds. */}
      <ul className="tiles" aria-label={t('views.dashboard.tiles')}>
        <li>
          <button className="tile" data-testid="tile-pending" title={t('views.dashboard.openWaiting')} onClick={() => openDeliveries(['retrying'])}>
            <strong>{stats.now.pending}</strong> {t('dashboard.tilePending', { count: stats.now.pending })}
          </button>
        </li>
        <li>
          <button className={stats.now.dead > 0 ? 'tile bad' : 'tile'} data-testid="tile-dead" title={t('views.dashboard.openDead')} onClick={() => openDeliveries(['dead'])}>
            <strong>{stats.now.dead}</strong> {t('dashboard.tileDead', { count: stats.now.dead })}
          </button>
        </li>
        <li>
          <button className={stats.now.needsHuman > 0 ? 'tile warn' : 'tile'} data-testid="tile-needs-human" title={t('views.dashboard.openNeedsHuman')} onClick={() => goTo('needs_you')}>
            <strong>{stats.now.needsHuman}</strong> {t('dashboard.tileNeedsHuman', { count: stats.now.needsHuman })}
          </button>
        </li>
      </ul>
      <Chart
        title={t('dashboard.requests')}
        times={stats.minutes}
        step={60}
        range={range}
        series={[
          { label: t('dashboard.accepted'), color: '#2463eb', values: stats.requests.map((n, i) => n - (stats.rejected[i] ?? 0)) },
          { label: t('dashboard.rejected'), color: '#dc2626', values: stats.rejected },
        ]}
      />
      <Chart
        title={t('dashboard.replies')}
        times={stats.minutes}
        step={60}
        range={range}
        series={[
          { label: t('dashboard.autoReplies'), color: '#16a34a', values: stats.replies },
          { label: t('dashboard.handoffs'), color: '#d97706', values: stats.handoffs },
          { label: t('dashboard.failures'), color: '#dc2626', values: stats.deliveryFailures },
        ]}
      />
      <Chart
        title={t('dashboard.outbox')}
        times={outboxTimes}
        step={15}
        range={range}
        gauge
        series={[{ label: t('dashboard.pending'), color: '#7c3aed', values: stats.outboxDepth.map(([, n]) => n) }]}
      />
    </section>
  );
}
