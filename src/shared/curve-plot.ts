/**
 * The geometry of the threshold plot (thresholds across, shares 0..1 up), shared by the console's
 * knowledge-base view and the SVG the kb-quality bench writes for README, so both draw alike.
 */

export interface PlotBox {
  width: number;
  height: number;
  /** Room for the axes' labels: left and bottom. */
  left: number;
  bottom: number;
  top: number;
  right: number;
  /** The thresholds' range across. */
  from: number;
  to: number;
}

export const PLOT_BOX: PlotBox = { width: 360, height: 170, left: 46, bottom: 24, top: 8, right: 8, from: 0.2, to: 0.8 };

export const xOf = (box: PlotBox, threshold: number): number => box.left + ((threshold - box.from) / (box.to - box.from)) * (box.width - box.left - box.right);
export const yOf = (box: PlotBox, share: number): number => box.top + (1 - Math.max(0, Math.min(1, share))) * (box.height - box.top - box.bottom);

/** An SVG polyline's points for (threshold, share) pairs. */
export function polyline(box: PlotBox, points: ReadonlyArray<{ threshold: number; share: number }>): string {
  return points.map((p) => `${xOf(box, p.threshold).toFixed(1)},${yOf(box, p.share).toFixed(1)}`).join(' ');
}

export const TICKS_X = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];
export const TICKS_Y = [0, 0.25, 0.5, 0.75, 1];

export interface CurveLine {
  label: string;
  color: string;
  /** Dashed, so the lines differ in more than colour. */
  dashed: boolean;
  points: ReadonlyArray<{ threshold: number; share: number }>;
}

const escape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

/** A standalone SVG document (README): the same plot, with its legend and a title for readers of the file. */
export function curveSvg(title: string, lines: readonly CurveLine[], marked: number, box: PlotBox = PLOT_BOX): string {
  const h = box.height + 18 * lines.length + 8;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${box.width}" height="${h}" viewBox="0 0 ${box.width} ${h}" font-family="sans-serif" font-size="11" role="img" aria-label="${escape(title)}">`);
  out.push(`<title>${escape(title)}</title>`);
  out.push(`<rect width="${box.width}" height="${h}" fill="#ffffff"/>`);
  for (const t of TICKS_Y) {
    const y = yOf(box, t).toFixed(1);
    out.push(`<line x1="${box.left}" x2="${box.width - box.right}" y1="${y}" y2="${y}" stroke="#e2e2e6"/>`);
    out.push(`<text x="${box.left - 4}" y="${y}" text-anchor="end" dominant-baseline="middle" fill="#6b6b72">${Math.round(t * 100)} %</text>`);
  }
  for (const t of TICKS_X) out.push(`<text x="${xOf(box, t).toFixed(1)}" y="${box.height - 6}" text-anchor="middle" fill="#6b6b72">${t.toFixed(1)}</text>`);
  const mx = xOf(box, marked).toFixed(1);
  out.push(`<line x1="${mx}" x2="${mx}" y1="${box.top}" y2="${box.height - box.bottom}" stroke="#1d1d1f" stroke-dasharray="2 3"/>`);
  for (const l of lines) out.push(`<polyline fill="none" stroke="${l.color}" stroke-width="2"${l.dashed ? ' stroke-dasharray="6 4"' : ''} points="${polyline(box, l.points)}"/>`);
  lines.forEach((l, i) => {
    const y = box.height + 10 + i * 18;
    out.push(`<line x1="${box.left}" x2="${box.left + 24}" y1="${y}" y2="${y}" stroke="${l.color}" stroke-width="2"${l.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    out.push(`<text x="${box.left + 30}" y="${y}" dominant-baseline="middle" fill="#1d1d1f">${escape(l.label)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
