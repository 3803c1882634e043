import { z } from 'zod';
import type { KnowledgeSource } from './kb-engine.ts';
import { ImportError } from '../cli/kb-import.ts';
import type { KbTradeOff } from '../../shared/console-views.ts';

/**
 * The threshold's trade-off, measured: questions (labelled with the entry that answers them, or
 * none) ranked against a knowledge base, and at each threshold how many would be answered right,
 * answered wrong, handed off, and how many uncovered ones answered anyway. The bench's figures
 * (bench/kb-quality.ts) and the console's curve come from here.
 */

export interface LabelledQuestion {
  question: string;
  /** The question of the entry that answers it; null when the knowledge base does not cover it. */
  expected: string | null;
}

export interface Judged<T extends LabelledQuestion = LabelledQuestion> {
  item: T;
  /** The best entry's question and score; null when nothing matched at all. */
  best: { question: string; score: number } | null;
  /** Where a right entry ranks (1-based) among the top 5; null when absent. */
  rank: number | null;
}

/** From 0.20 to 0.80 in steps of 0.05: where a useful threshold lies. */
export const CURVE_THRESHOLDS: readonly number[] = Array.from({ length: 13 }, (_, i) => Math.round((0.2 + i * 0.05) * 100) / 100);

export type SameAnswer = (entryQuestion: string, expected: string | null) => boolean;
const exactly: SameAnswer = (a, b) => a === b;

export function judgeQuestions<T extends LabelledQuestion>(source: KnowledgeSource, items: readonly T[], same: SameAnswer = exactly): Array<Judged<T>> {
  return items.map((item) => {
    const ranked = source.rank([item.question], 5);
    const at = ranked.findIndex((r) => same(r.entry.question, item.expected));
    return { item, best: ranked[0] ? { question: ranked[0].entry.question, score: ranked[0].score } : null, rank: at >= 0 ? at + 1 : null };
  });
}

/** At one threshold, what the labelled questions would get (the console's plot draws it). */
export type TradeOff = KbTradeOff;

export function tradeOffAt(judged: readonly Judged[], threshold: number, same: SameAnswer = exactly): TradeOff {
  const covered = judged.filter((j) => j.item.expected !== null);
  const uncovered = judged.filter((j) => j.item.expected === null);
  const answered = (j: Judged): boolean => j.best !== null && j.best.score >= threshold;
  const right = covered.filter((j) => answered(j) && same(j.best!.question, j.item.expected)).length;
  const wrong = covered.filter((j) => answered(j) && !same(j.best!.question, j.item.expected)).length;
  return { threshold, paraphrases: covered.length, right, wrong, handedOff: covered.length - right - wrong, uncovered: uncovered.length, uncoveredAnswered: uncovered.filter(answered).length };
}

/** Per threshold, the share of `scores` (each question's best match) at or above it. */
export function answeredShares(scores: readonly number[], thresholds: readonly number[] = CURVE_THRESHOLDS): Array<{ threshold: number; answered: number }> {
  return thresholds.map((threshold) => ({ threshold, answered: scores.length === 0 ? 0 : scores.filter((s) => s >= threshold).length / scores.length }));
}

const lineSchema = z.object({ question: z.string().trim().min(1).max(2000), expected: z.string().trim().min(1).max(2000).nullable() });

/**
 * A file of labelled questions: JSON Lines of {"question", "expected"} (expected null or absent for
 * a question the knowledge base should not answer; other keys ignored, as in resources/eval/), or
 * CSV with the header question,expected (an empty expected: not covered).
 */
export function parseLabelledQuestions(fileName: string, text: string, known: ReadonlySet<string>): LabelledQuestion[] {
  const items: LabelledQuestion[] = [];
  if (/\.jsonl$/i.test(fileName)) {
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      let data: unknown;
      try {
        data = JSON.parse(line);
      } catch {
        throw new ImportError(`line ${i + 1}: not valid JSON`);
      }
      const parsed = lineSchema.safeParse({ expected: null, ...(data as object) });
      if (!parsed.success) throw new ImportError(`line ${i + 1}: needs "question" (text) and "expected" (an entry's question, or null)`);
      items.push(parsed.data);
    });
  } else if (/\.csv$/i.test(fileName)) {
    const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
    if (lines[0]?.trim().toLowerCase() !== 'question,expected') throw new ImportError('line 1: header must be "question,expected"');
    lines.slice(1).forEach((line, i) => {
      if (line.trim() === '') return;
      const m = /^(?:"((?:[^"]|"")*)"|([^,"]*)),(?:"((?:[^"]|"")*)"|([^,"]*))$/.exec(line);
      if (!m) throw new ImportError(`line ${i + 2}: expected two fields, question and expected (quote a field holding a comma)`);
      const question = (m[1]?.replace(/""/g, '"') ?? m[2] ?? '').trim();
      const expected = (m[3]?.replace(/""/g, '"') ?? m[4] ?? '').trim();
      if (question === '') throw new ImportError(`line ${i + 2}: the question is empty`);
      items.push({ question, expected: expected === '' ? null : expected });
    });
  } else {
    throw new ImportError(`${fileName}: use .jsonl (lines of {"question", "expected"}) or .csv (header question,expected)`);
  }
  if (items.length === 0) throw new ImportError(`${fileName}: no questions`);
  if (items.length > 2000) throw new ImportError(`${fileName}: ${items.length} questions; at most 2,000 at a time`);
  const unknown = items.find((i) => i.expected !== null && !known.has(i.expected));
  if (unknown) throw new ImportError(`"${unknown.expected}" is no question of the knowledge base (expected names an entry by its question)`);
  return items;
}
