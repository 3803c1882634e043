import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { TextFilePicker } from './kb-pickers.tsx';
import type { KbCurve } from '../../../shared/console-api.ts';
import { PLOT_BOX, TICKS_X, TICKS_Y, polyline, xOf, yOf, type CurveLine } from '../../../shared/curve-plot.ts';
import { api } from '../api/bridge.ts';
import { useConsole } from '../store/index.ts';
import { mayCall } from '../../../shared/console-roles.ts';

const pct = (share: number): string => `${Math.round(share * 100)} %`;

/** The lines drawn: recent questions answered, and with a labelled file, right and wrongly answered. */
function linesOf(curve: KbCurve, t: (key: string) => string): CurveLine[] {
  const lines: CurveLine[] = [];
  if (curve.recent.questions > 0) lines.push({ label: t('kb.curve.recent'), color: 'var(--accent)', dashed: false, points: curve.recent.points.map((p) => ({ threshold: p.threshold, share: p.answered })) });
  const l = curve.labelled;
  if (l) {
    if (l.points[0]!.paraphrases > 0) lines.push({ label: t('kb.curve.right'), color: 'var(--ok)', dashed: false, points: l.points.map((p) => ({ threshold: p.threshold, share: p.right / p.paraphrases })) });
    if (l.points[0]!.uncovered > 0) lines.push({ label: t('kb.curve.uncovered'), color: 'var(--bad)', dashed: true, points: l.points.map((p) => ({ threshold: p.threshold, share: p.uncoveredAnswered / p.uncovered })) });
  }
  return lines;
}

/**
 * The threshold's trade-off in the knowledge-base view: how many of the last week's customer
 * questions the built-in engine would answer at each threshold, and, with a file of questions
 * labelled with their right entries, how many it would answer right and how many it should not
 * have answered at all.
 */
export function ThresholdCurve() {
  const { t } = useTranslation();
  const [curve, setCurve] = useState<KbCurve | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [labelled, setLabelled] = useState<{ fileName: string; text: string } | undefined>(undefined);
  const [draft, setDraft] = useState('');
  const [saved, setSaved] = useState<string | null>(null);
  const mayChange = useConsole((s) => mayCall(s.me.role, 'setKbThreshold'));
  const load = async (file = labelled): Promise<void> => {
    const r = await api.kbCurve({ days: 7, labelled: file });
    if (r.ok) {
      setCurve(r.value);
      setLabelled(file);
      setDraft(String(r.value.threshold));
      setError(null);
    } else setError(r.error.message);
  };
  const setThreshold = async (threshold: number | null): Promise<void> => {
    const r = await api.setKbThreshold({ threshold });
    if (!r.ok) return setError(r.error.message);
    setSaved(t('kb.curve.saved', { threshold: r.value.threshold }));
    await load();
  };
  useEffect(() => {
    void load();
  }, []);
  if (!curve) return error ? <p role="alert">{error}</p> : null;
  const box = PLOT_BOX;
  // A threshold outside the plotted range is marked at its edge.
  const marked = Math.min(box.to, Math.max(box.from, curve.threshold));
  const lines = linesOf(curve, t);
  return (
    <section className="threshold-curve" aria-labelledby="threshold-curve-title">
      <h3 id="threshold-curve-title">{t('kb.curve.title')}</h3>
      <p className="muted">
        {curve.recent.questions === 0
          ? t('kb.curve.noRecent', { days: curve.recent.days, threshold: curve.threshold })
          : t('kb.curve.summary', { threshold: curve.threshold, share: pct(curve.recent.answeredNow), count: curve.recent.questions, days: curve.recent.days })}
      </p>
      {lines.length > 0 && (
        <figure>
          <svg width={box.width} height={box.height} viewBox={`0 0 ${box.width} ${box.height}`} role="img" aria-label={t('kb.curve.plotLabel', { threshold: curve.threshold })}>
            {TICKS_Y.map((v) => (
              <g key={`y${v}`}>
                <line x1={box.left} x2={box.width - box.right} y1={yOf(box, v)} y2={yOf(box, v)} className="grid-line" />
                <text x={box.left - 4} y={yOf(box, v)} textAnchor="end" dominantBaseline="middle" className="tick">
                  {pct(v)}
                </text>
              </g>
            ))}
            {TICKS_X.map((v) => (
              <text key={`x${v}`} x={xOf(box, v)} y={box.height - 6} textAnchor="middle" className="tick">
                {v.toFixed(1)}
              </text>
            ))}
            <line x1={xOf(box, marked)} x2={xOf(box, marked)} y1={box.top} y2={box.height - box.bottom} className="marker" />
            {lines.map((l) => (
              <polyline key={l.label} fill="none" stroke={l.color} strokeWidth={2} strokeDasharray={l.dashed ? '6 4' : undefined} points={polyline(box, l.points)} />
            ))}
          </svg>
          <figcaption>
            <ul className="legend">
              {lines.map((l) => (
                <li key={l.label}>
                  <svg width="24" height="8" aria-hidden="true">
                    <line x1="0" x2="24" y1="4" y2="4" stroke={l.color} strokeWidth={2} strokeDasharray={l.dashed ? '6 4' : undefined} />
                  </svg>{' '}
                  {l.label}
                </li>
              ))}
              <li>{t('kb.curve.marker', { threshold: curve.threshold })}</li>
            </ul>
          </figcaption>
        </figure>
      )}
      {lines.length > 0 && (
        <details>
          <summary>{t('kb.curve.figures')}</summary>
          <table className="grid" data-testid="curve-table">
            <thead>
              <tr>
                <th scope="col">{t('kb.curve.threshold')}</th>
                {lines.map((l) => (
                  <th scope="col" key={l.label}>
                    {l.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {curve.recent.points.map((p, i) => (
                <tr key={p.threshold}>
                  <th scope="row">{p.threshold.toFixed(2)}</th>
                  {lines.map((l) => (
                    <td key={l.label}>{pct(l.points[i]!.share)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
      {mayChange && (
        <form
          className="curve-actions"
          onSubmit={(e) => {
            e.preventDefault();
            const value = Math.round(Number(draft) * 100) / 100;
            if (draft.trim() !== '' && value >= 0.2 && value <= 0.8) void setThreshold(value);
          }}
        >
          <label>
            {t('kb.curve.set')}{' '}
            <input type="number" min={0.2} max={0.8} step={0.01} value={draft} onChange={(e) => setDraft(e.target.value)} data-testid="threshold-input" />
          </label>
          <button type="submit" disabled={draft.trim() === '' || Number(draft) === curve.threshold || !(Number(draft) >= 0.2 && Number(draft) <= 0.8)}>
            {t('kb.curve.use')}
          </button>
          {curve.threshold !== curve.defaultThreshold && (
            <button type="button" onClick={() => void setThreshold(null)}>
              {t('kb.curve.reset', { threshold: curve.defaultThreshold })}
            </button>
          )}
          <small className="muted">{t('kb.curve.setHint')}</small>
        </form>
      )}
      <p role="status" className="muted" data-testid="threshold-status">
        {saved}
      </p>
      <div className="curve-actions">
        <button type="button" onClick={() => void load()}>
          {t('kb.curve.refresh')}
        </button>
        <TextFilePicker label={t('kb.curve.evaluate')} accept=".jsonl,.csv" onText={(fileName, text) => void load({ fileName, text })} />
        {curve.labelled && <small>{t('kb.curve.evaluated', { file: curve.labelled.fileName, count: curve.labelled.questions })}</small>}
      </div>
      {error && <p role="alert">{error}</p>}
    </section>
  );
}
