// npm run bench -- kb-quality: how well the built-in engine's knowledge-base match understands the
// way customers really ask (issue 29, "measure first"). The shipped resources/sample-kb.csv against
// resources/eval/kb-questions.jsonl: paraphrases of its questions and questions it does not cover,
// English and Chinese, split into a dev part (to tune on) and a held-out part (never tuned on).
// Quality, not speed: the baseline is the issue's targets, and the threshold's trade-off is a curve.
import { readFileSync, writeFileSync } from 'node:fs';
import { curveSvg, type CurveLine } from '../src/shared/curve-plot.ts';
import { CURVE_THRESHOLDS, judgeQuestions, tradeOffAt, type Judged as EvalJudged } from '../src/main/engines/kb-evaluate.ts';
import { join } from 'node:path';
import { z } from 'zod';
import { parsePairs } from '../src/main/cli/kb-import.ts';
import { buildKbIndex } from '../src/main/engines/kb-index.ts';
import { DEFAULT_KB_ENGINE_OPTIONS } from '../src/main/engines/kb-engine.ts';
import { hybridFlags, runKbQualityHybrid } from './kb-quality-hybrid.ts';

const ROOT = join(import.meta.dirname, '..');

const itemSchema = z.strictObject({
  question: z.string().min(1),
  expected: z.string().min(1).nullable(),
  lang: z.enum(['en', 'zh']),
  kind: z.enum(['paraphrase', 'uncovered']),
  split: z.enum(['dev', 'held-out', 'fresh']),
});
type Item = z.infer<typeof itemSchema>;

/**
 * Entries that answer the same thing in two languages: the best of either is a right answer (a
 * Chinese customer is well served by the Chinese entry written for the English one's question).
 */
const SAME_ANSWER: ReadonlyArray<readonly [string, string]> = [
  ['How do I reset my password?', '如何重置密码？'],
  ['How do I return an item?', '如何申请退货？'],
];
const sameAnswer = (a: string, b: string | null): boolean => a === b || SAME_ANSWER.some(([x, y]) => (a === x && b === y) || (a === y && b === x));

/**
 * The set written with the engine (dev to tune on, held-out kept aside), and a second one written
 * blind afterwards, by someone who saw only the knowledge base's original 16 questions and answers,
 * before any phrasing or synonym existed: text nobody tuned on.
 */
const EVAL_FILES = ['kb-questions.jsonl', 'kb-questions-fresh.jsonl'];

/** Issue 29's targets, on the set and on text not tuned on. */
const TARGETS = { top1: 0.75, top5: 0.95, wrongUncovered: 0.02 };

type Judged = EvalJudged<Item>;

function loadEval(file: string, kb: ReadonlySet<string>): Item[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line, i) => {
      const item = itemSchema.parse(JSON.parse(line));
      if (item.expected !== null && !kb.has(item.expected)) throw new Error(`${file}:${i + 1}: "${item.expected}" is no question of the knowledge base`);
      if ((item.expected === null) !== (item.kind === 'uncovered')) throw new Error(`${file}:${i + 1}: an uncovered question has no expected entry, and only it`);
      return item;
    });
}

const pct = (n: number, of: number): string => (of === 0 ? '–' : `${((100 * n) / of).toFixed(1)} % (${n}/${of})`);

/** The figures of one slice of the set, at one threshold: the trade-off, and where the right entry ranks. */
function figures(judged: readonly Judged[], threshold: number) {
  const t = tradeOffAt(judged, threshold, sameAnswer);
  const para = judged.filter((j) => j.item.expected !== null);
  return {
    para: t.paraphrases,
    top1: t.right,
    top5: para.filter((j) => j.rank !== null).length,
    first: para.filter((j) => j.rank === 1).length,
    wrongPara: t.wrong,
    unc: t.uncovered,
    wrongUnc: t.uncoveredAnswered,
  };
}

export async function runKbQuality(): Promise<string> {
  const kbFile = join(ROOT, 'resources', 'sample-kb.csv');
  const entries = parsePairs('sample-kb.csv', readFileSync(kbFile, 'utf8')).map((p, i) => ({ id: i + 1, ...p }));
  const questions = new Set(entries.map((e) => e.question));
  const items = EVAL_FILES.flatMap((f) => loadEval(join(ROOT, 'resources', 'eval', f), questions));
  const index = buildKbIndex(entries);
  const judged = judgeQuestions(index, items, sameAnswer);
  const threshold = DEFAULT_KB_ENGINE_OPTIONS.threshold;
  const lines: string[] = [];
  lines.push(`kb-quality: ${entries.length} entries (resources/sample-kb.csv), ${items.length} questions (resources/eval/${EVAL_FILES.join(', ')}), the built-in engine at threshold ${threshold}`);
  lines.push('');
  lines.push('| slice | top-1 right (target ≥ 75 %) | right entry in top 5 (≥ 95 %) | uncovered answered anyway (< 2 %) | paraphrases answered wrong | right entry ranked first, any score |');
  lines.push('|---|---:|---:|---:|---:|---:|');
  const slices: Array<[string, (j: Judged) => boolean]> = [
    ['all', () => true],
    ['dev', (j) => j.item.split === 'dev'],
    ['held-out (not tuned on)', (j) => j.item.split === 'held-out'],
    ['fresh (written blind, not tuned on)', (j) => j.item.split === 'fresh'],
    ['English', (j) => j.item.lang === 'en'],
    ['Chinese', (j) => j.item.lang === 'zh'],
  ];
  for (const [name, keep] of slices) {
    const f = figures(judged.filter(keep), threshold);
    lines.push(`| ${name} | ${pct(f.top1, f.para)} | ${pct(f.top5, f.para)} | ${pct(f.wrongUnc, f.unc)} | ${pct(f.wrongPara, f.para)} | ${pct(f.first, f.para)} |`);
  }
  const all = figures(judged, threshold);
  const held = figures(judged.filter((j) => j.item.split === 'held-out'), threshold);
  const verdict = (got: number, target: number, below = false): string => ((below ? got < target : got >= target) ? 'met' : 'not met');
  lines.push('');
  lines.push(
    `targets (all / held-out): top-1 ${verdict(all.top1 / all.para, TARGETS.top1)} / ${verdict(held.top1 / held.para, TARGETS.top1)}; ` +
      `top-5 ${verdict(all.top5 / all.para, TARGETS.top5)} / ${verdict(held.top5 / held.para, TARGETS.top5)}; ` +
      `uncovered ${verdict(all.wrongUnc / all.unc, TARGETS.wrongUncovered, true)} / ${verdict(held.wrongUnc / held.unc, TARGETS.wrongUncovered, true)}`,
  );
  lines.push('');
  lines.push('The threshold\'s trade-off (all questions): raising it hands off more paraphrases and answers fewer uncovered questions.');
  lines.push('');
  lines.push('| threshold | top-1 right | paraphrases handed off | uncovered answered anyway |');
  lines.push('|---:|---:|---:|---:|');
  for (let t = 0.2; t <= 0.801; t += 0.05) {
    const f = figures(judged, t);
    const handedOff = f.para - f.top1 - f.wrongPara;
    lines.push(`| ${t.toFixed(2)}${Math.abs(t - threshold) < 1e-9 ? ' (default)' : ''} | ${pct(f.top1, f.para)} | ${pct(handedOff, f.para)} | ${pct(f.wrongUnc, f.unc)} |`);
  }
  const misses = judged.filter((j) => j.item.kind === 'paraphrase' && !(j.best && j.best.score >= threshold && sameAnswer(j.best.question, j.item.expected))).slice(0, 12);
  lines.push('');
  lines.push('Some paraphrases not answered right (question → best entry, score):');
  for (const m of misses) lines.push(`- "${m.item.question}" → ${m.best ? `"${m.best.question}" ${m.best.score.toFixed(2)}` : 'nothing'} (expected "${m.item.expected}")`);
  // With --svg FILE: the curve as a picture (README's, docs/images/kb-threshold.svg).
  const svgAt = process.argv.indexOf('--svg');
  if (svgAt > 0 && process.argv[svgAt + 1]) {
    const file = process.argv[svgAt + 1]!;
    const covered = judged.filter((j) => j.item.kind === 'paraphrase').length;
    const uncovered = judged.length - covered;
    const at = (t: number) => figures(judged, t);
    const lines: CurveLine[] = [
      { label: `Paraphrases answered right (${covered} questions)`, color: '#15803d', dashed: false, points: CURVE_THRESHOLDS.map((t) => ({ threshold: t, share: at(t).top1 / covered })) },
      { label: `Uncovered questions answered anyway (${uncovered})`, color: '#b91c1c', dashed: true, points: CURVE_THRESHOLDS.map((t) => ({ threshold: t, share: at(t).wrongUnc / uncovered })) },
    ];
    writeFileSync(file, curveSvg(`The built-in engine's threshold against the sample knowledge base; dotted: the default ${threshold}`, lines, threshold));
  }
  // With --embeddings-url URL --embedding-model M: the hybrid ranking's figures next to these.
  const hybrid = hybridFlags(process.argv.slice(2));
  if (hybrid) lines.push('', await runKbQualityHybrid(hybrid, { entries, items, index, threshold, lexical: judged, sameAnswer, figures }));
  return lines.join('\n');
}

if (import.meta.main) console.log(await runKbQuality());
