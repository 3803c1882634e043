import { Buffer } from 'node:buffer';
import type { KbCandidate, KnowledgeSource } from './kb-engine.ts';
import { isCjkText, textUnits } from './text/text-units.ts';
import { createTypoFixer } from './text/typo-fixer.ts';
import { rankEntries, type MatchIndex } from './kb-match.ts';

/**
 * The knowledge base held in memory by the engine thread: each entry's question, its "also
 * asked as" phrasings and its answer split into matching units (text/text-units.ts), with an
 * inverted index from unit to entries, so a question is scored only against the entries that
 * share a unit with it (a few of thousands), and each unit weighed by how rare it is in this
 * knowledge base ("password" says more than "account" when every entry mentions accounts).
 */

export interface KbIndex extends KnowledgeSource {
  readonly size: number;
}

type EntryInput = { id: number; question: string; answer: string; phrasings?: readonly string[] };

function unitMap(text: string): Map<string, number> {
  const units = new Map<string, number>();
  for (const u of textUnits(text)) units.set(u.unit, Math.max(units.get(u.unit) ?? 0, u.weight));
  return units;
}

export function buildKbIndex(entries: readonly EntryInput[]): KbIndex {
  const sorted = [...entries].sort((a, b) => a.id - b.id);
  const list: KbCandidate[] = sorted.map((e) => ({ id: e.id, question: e.question, answer: e.answer, phrasings: e.phrasings ?? [] }));
  const answers = list.map((e) => new Set(unitMap(e.answer).keys()));
  const texts: Array<{ entry: number; units: Map<string, number> }> = [];
  list.forEach((e, i) => {
    for (const text of [e.question, ...e.phrasings]) {
      const units = unitMap(text);
      if (units.size > 0) texts.push({ entry: i, units });
    }
  });
  // Document frequency over entries: an entry counts once, whichever of its texts holds the unit.
  const entriesWith = new Map<string, Set<number>>();
  const note = (u: string, e: number): void => {
    const set = entriesWith.get(u);
    if (set) set.add(e);
    else entriesWith.set(u, new Set([e]));
  };
  answers.forEach((units, e) => units.forEach((u) => note(u, e)));
  for (const t of texts) for (const u of t.units.keys()) note(u, t.entry);
  const n = list.length;
  // Rarer units weigh more (a smoothed inverse document frequency over entries).
  const idfOf = (df: number): number => Math.log(1 + (n + 1) / (df + 0.5));
  const idf = new Map<string, number>();
  for (const [u, set] of entriesWith) idf.set(u, idfOf(set.size));

  const textEntry = Int32Array.from(texts, (t) => t.entry);
  const textTotal = new Float64Array(texts.length);
  const byUnit = new Map<string, { texts: number[]; weights: number[]; inAnswer: number[] }>();
  texts.forEach((t, i) => {
    for (const [u, w] of t.units) {
      const x = w * idf.get(u)!;
      textTotal[i]! += x;
      const inAnswer = answers[t.entry]!.has(u) ? 1 : 0;
      const p = byUnit.get(u);
      if (p) {
        p.texts.push(i);
        p.weights.push(x);
        p.inAnswer.push(inAnswer);
      } else byUnit.set(u, { texts: [i], weights: [x], inAnswer: [inAnswer] });
    }
  });
  const textPostings = new Map([...byUnit].map(([u, p]) => [u, { texts: Int32Array.from(p.texts), weights: Float64Array.from(p.weights), inAnswer: Uint8Array.from(p.inAnswer) }]));
  const byAnswer = new Map<string, number[]>();
  answers.forEach((units, e) => units.forEach((u) => (byAnswer.get(u) ?? byAnswer.set(u, []).get(u)!).push(e)));
  const index: MatchIndex = {
    entries: list,
    cjk: Uint8Array.from(list, (e) => (isCjkText(e.answer) ? 1 : 0)),
    textEntry,
    textTotal,
    textPostings,
    answerPostings: new Map([...byAnswer].map(([u, l]) => [u, Int32Array.from(l)])),
    idf,
    unknownIdf: idfOf(1),
    fix: createTypoFixer(idf.keys()),
  };
  return { size: n, rank: (recent, limit) => rankEntries(index, recent, limit) };
}

/**
 * A knowledge source that rebuilds its index when the knowledge base changed (a point read of
 * the store's version before each query), so an edit from the console or the CLI counts at once.
 */
export function createIndexedKnowledge(store: {
  all(): Array<{ id: number; question: string; answer: string; phrasings: string[] }>;
  version(): Uint8Array;
}): KnowledgeSource & { refresh(): void } {
  let version: Buffer | null = null;
  let index: KbIndex = buildKbIndex([]);
  const current = (): KbIndex => {
    const v = store.version();
    if (!version?.equals(v)) {
      // Copied: the version is read before the entries, so a change in between rebuilds again.
      version = Buffer.from(v);
      index = buildKbIndex(store.all());
    }
    return index;
  };
  return {
    /** Builds the index now (at start-up) rather than in the first question's time. */
    refresh: () => void current(),
    rank: (recent, limit) => current().rank(recent, limit),
  };
}
