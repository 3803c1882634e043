import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import uPlot from 'uplot';
import { shortTime } from '../format.ts';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  color: string;
  values: number[];
}

/**
 * The x range. uPlot widens a single time sample to [t, t + 86 400 / ms], i.e. a thousand days at
 * second timestamps, and the axis then spans years. One sample (or none) gets a window of a few
 * steps ending just after it; otherwise the range asked for (all data, or a zoom) stands.
 */
export function timeRange(times: ArrayLike<number>, min: number | null, max: number | null, step: number, now = Date.now() / 1000): [number, number] {
  const first = times[0];
  const last = times[times.length - 1];
  if (first === undefined || last === undefined) return [now - 5 * step, now];
  if (last - first < step) return [last - 5 * step, last + step];
  return [min ?? first, max ?? last];
}

/** Shortest span a shared range shows: a lone sample gets a little time either side, not years. */
const MIN_SPAN = 120;

/**
 * One x range for every chart on a page, in epoch seconds: from the later of the window's start and
 * the first thing that happened (the first non-zero sample, or the first outbox sample, which the
 * server takes when it starts) to the latest sample (now, as the server sees it). Minutes before the
 * server ran hold only zeros and would take most of the width.
 */
export function sharedRange(windowStart: number, series: ReadonlyArray<{ times: ArrayLike<number>; values?: ArrayLike<number> }>): [number, number] | null {
  let first = Infinity;
  let last = -Infinity;
  for (const { times, values } of series) {
    for (let i = 0; i < times.length; i++) {
      const at = times[i]!;
      last = Math.max(last, at);
      if (at < first && (values === undefined || values[i] !== 0)) first = at;
    }
  }
  if (last === -Infinity) return null;
  const start = Math.min(Math.max(windowStart, first), last);
  return last - start < MIN_SPAN ? [last - MIN_SPAN, last + 15] : [start, last];
}

/** What the canvas shows, as a table for screen readers: each series' latest value, peak and total. */
function TextAlternative({ title, times, series, gauge }: { title: string; times: number[]; series: ChartSeries[]; gauge: boolean }) {
  const { t, i18n } = useTranslation();
  const last = times.length - 1;
  const time = last >= 0 ? shortTime(times[last]! * 1000, i18n.language) : '';
  return (
    <table className="sr-only">
      <caption>{title}</caption>
      <thead>
        <tr>
          <th scope="col">{t('views.dashboard.series')}</th>
          <th scope="col">{t('views.dashboard.latest')}</th>
          <th scope="col">{t('views.dashboard.peak')}</th>
          {!gauge && <th scope="col">{t('views.dashboard.total')}</th>}
        </tr>
      </thead>
      <tbody>
        {series.map((s) => (
          <tr key={s.label}>
            <th scope="row">{s.label}</th>
            <td>{last < 0 ? t('views.dashboard.noData') : t('views.dashboard.at', { value: s.values[last] ?? 0, time })}</td>
            <td>{s.values.length ? Math.max(...s.values) : 0}</td>
            {!gauge && <td>{s.values.reduce((a, b) => a + b, 0)}</td>}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * A time-series chart (uPlot: canvas, fast with thousands of points, tiny). `times` are epoch
 * seconds, `step` the seconds between samples; a `gauge` (a level, not a count) has no total.
 * `range` (see sharedRange) puts several charts on one time axis; such a chart does not zoom, so
 * the axes stay aligned.
 */
export function Chart({ title, times, series, step, gauge = false, height = 180, range }: { title: string; times: number[]; series: ChartSeries[]; step: number; gauge?: boolean; height?: number; range?: [number, number] | null }) {
  const figure = useRef<HTMLElement>(null);
  // Read by the scale at each setData, so a new range needs no rebuild.
  const shared = useRef(range);
  shared.current = range;
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const labels = series.map((s) => s.label).join('|');

  useEffect(() => {
    if (!box.current) return;
    const opts: uPlot.Options = {
      title,
      width: box.current.clientWidth || 600,
      height,
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, fill: `${s.color}22` }))],
      axes: [{ stroke: 'currentColor' }, { stroke: 'currentColor' }],
      cursor: { drag: { x: range === undefined, y: false } },
      scales: {
        x: {
          time: true,
          range: (u, min, max) => shared.current ?? timeRange(u.data[0] ?? [], min, max, step),
        },
        y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] },
      },
      hooks: {
        // The drawn range, for tests and debugging: the canvas itself cannot be read back as text.
        setScale: [
          (u, key) => {
            if (key !== 'x' || !figure.current) return;
            figure.current.dataset['xMin'] = String(u.scales['x']?.min ?? '');
            figure.current.dataset['xMax'] = String(u.scales['x']?.max ?? '');
          },
        ],
      },
    };
    plot.current = new uPlot(opts, [times, ...series.map((s) => s.values)], box.current);
    const observer = new ResizeObserver(() => box.current && plot.current?.setSize({ width: box.current.clientWidth, height }));
    observer.observe(box.current);
    return () => {
      observer.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
    // Rebuilt only when the series change; new data goes through setData below.
  }, [title, labels, height, step]);

  useEffect(() => {
    plot.current?.setData([times, ...series.map((s) => s.values)]);
  }, [times, series]);

  return (
    <figure className="chart" ref={figure} data-testid={`chart-${title}`}>
      <div ref={box} aria-hidden="true" />
      <TextAlternative title={title} times={times} series={series} gauge={gauge} />
    </figure>
  );
}
