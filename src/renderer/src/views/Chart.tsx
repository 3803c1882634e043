import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  color: string;
  values: number[];
}

/** A time-series chart (uPlot: canvas, fast with thousands of points, tiny). */
export function Chart({ title, times, series, height = 180 }: { title: string; times: number[]; series: ChartSeries[]; height?: number }) {
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
      scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
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
  }, [title, labels, height]);

  useEffect(() => {
    plot.current?.setData([times, ...series.map((s) => s.values)]);
  }, [times, series]);

  return <div className="chart" ref={box} data-testid={`chart-${title}`} />;
}
