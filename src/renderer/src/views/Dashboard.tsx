import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { Chart } from './Chart.tsx';

export function Dashboard() {
  const { t } = useTranslation();
  const stats = useConsole((s) => s.stats);
  const loadStats = useConsole((s) => s.loadStats);

  useEffect(() => {
    void loadStats();
    const timer = setInterval(() => void loadStats(), 5000);
    return () => clearInterval(timer);
  }, [loadStats]);

  if (!stats) return <section className="admin">{t('dashboard.loading')}</section>;
  return (
    <section className="admin dashboard" aria-label={t('nav.dashboard')}>
      <div className="tiles">
        <div className="tile" data-testid="tile-pending">
          <strong>{stats.now.pending}</strong> {t('dashboard.pending')}
        </div>
        <div className={stats.now.dead > 0 ? 'tile bad' : 'tile'}>
          <strong>{stats.now.dead}</strong> {t('dashboard.dead')}
        </div>
        <div className={stats.now.needsHuman > 0 ? 'tile warn' : 'tile'}>
          <strong>{stats.now.needsHuman}</strong> {t('dashboard.needsHuman')}
        </div>
      </div>
      <Chart
        title={t('dashboard.requests')}
        times={stats.minutes}
        series={[
          { label: t('dashboard.accepted'), color: '#2463eb', values: stats.requests.map((n, i) => n - (stats.rejected[i] ?? 0)) },
          { label: t('dashboard.rejected'), color: '#b91c1c', values: stats.rejected },
        ]}
      />
      <Chart
        title={t('dashboard.replies')}
        times={stats.minutes}
        series={[
          { label: t('dashboard.autoReplies'), color: '#15803d', values: stats.replies },
          { label: t('dashboard.handoffs'), color: '#b45309', values: stats.handoffs },
          { label: t('dashboard.failures'), color: '#b91c1c', values: stats.deliveryFailures },
        ]}
      />
      <Chart
        title={t('dashboard.outbox')}
        times={stats.outboxDepth.map(([time]) => time)}
        series={[{ label: t('dashboard.pending'), color: '#7c3aed', values: stats.outboxDepth.map(([, n]) => n) }]}
      />
    </section>
  );
}
