import type { KbCandidate } from './kb-engine.ts';
import { isCjkText, textUnits } from './text/text-units.ts';
import type { TypoFixer } from './text/typo-fixer.ts';

/**
 * The knowledge base as the matcher reads it. A "text" is one way of asking an entry: its
 * question or one of its "also asked as" phrasings. Postings lead from a unit to the texts and
 * answers holding it, so a question costs the postings of its own units, not a pass over the
 * knowledge base.
 */
export interface MatchIndex {
  entries: readonly KbCandidate[];
  /** Per entry: its answer is in Chinese (or another CJK script), the language the customer would get. */
  cjk: Uint8Array;
  /** Per text: the entry it asks for, and the sum of its units' weights. */
  textEntry: Int32Array;
  textTotal: Float64Array;
  /** Unit → the texts holding it, with the unit's weight (times its rarity) in each, and whether the entry's answer holds it too. */
  textPostings: ReadonlyMap<string, { texts: Int32Array; weights: Float64Array; inAnswer: Uint8Array }>;
  /** Unit → the entries whose answer holds it. */
  answerPostings: ReadonlyMap<string, Int32Array>;
  idf: ReadonlyMap<string, number>;
  /** The rarity of a unit no entry has: as rare as one entry's, no more telling than a rare known word. */
  unknownIdf: number;
  fix: TypoFixer;
}

export interface Ranked {
  entry: KbCandidate;
  score: number;
}

/** The latest message counts fully, each earlier one less, so a follow-up keeps its topic. */
const RECENCY = [1, 0.6, 0.4, 0.3, 0.2];
/** A unit found only in an entry's answer counts this much of one in its way of asking. */
const ANSWER_SHARE = 0.5;
/**
 * How much of the score is the customer's words being covered (the rest: the way of asking being
 * covered). Chosen on the evaluation set's dev part (bench/kb-quality.ts), with the others here.
 */
const QUERY_SIDE = 0.8;
/**
 * An entry answering in another language than the customer's counts a little less, so a knowledge
 * base with the same entry in English and Chinese answers each customer in theirs, while a
 * question with no entry in its language still finds the other one.
 */
const OTHER_LANGUAGE = 0.9;

/** How a message that continues the previous one begins, in English and Chinese. */
const FOLLOW_UP = /^(?:and|also|plus|or|what about|how about)\b|^(?:那|还有|另外|那么|和|以及)/i;

/** What a continuation's own match counts against its match read with the earlier messages. */
const CONTINUATION_ALONE = 0.75;

type Weighted = Map<string, number>;

/** Each message's units (newest first), read as the index knows them: a typo becomes its known word. */
function unitsOf(index: MatchIndex, texts: readonly string[]): Array<Array<{ unit: string; weight: number }>> {
  return texts.map((text) => textUnits(text).map((u) => ({ unit: index.idf.has(u.unit) ? u.unit : (index.fix.fix(u.unit) ?? u.unit), weight: u.weight })));
}

/** One weight per unit over the messages: the newest counts fully, each earlier one less. */
function weigh(messages: ReadonlyArray<ReadonlyArray<{ unit: string; weight: number }>>): Weighted {
  const weights: Weighted = new Map();
  messages.forEach((units, age) => {
    const recency = RECENCY[Math.min(age, RECENCY.length - 1)]!;
    for (const u of units) {
      const w = recency * u.weight;
      if (w > (weights.get(u.unit) ?? 0)) weights.set(u.unit, w);
    }
  });
  return weights;
}

/** Reusable per-index buffers: one question at a time runs on an index (one engine thread). */
interface Scratch {
  best: Float64Array;
  inText: Float64Array;
  both: Float64Array;
  textCovered: Float64Array;
  answer: Float64Array;
}
const scratches = new WeakMap<MatchIndex, Scratch>();
function scratchOf(index: MatchIndex): Scratch {
  let s = scratches.get(index);
  if (!s) {
    const texts = index.textEntry.length;
    s = { best: new Float64Array(index.entries.length), inText: new Float64Array(texts), both: new Float64Array(texts), textCovered: new Float64Array(texts), answer: new Float64Array(index.entries.length) };
    scratches.set(index, s);
  }
  return s;
}

/**
 * Per entry, the best similarity in 0..1 of the customer's units to one of its ways of asking: a
 * weighted geometric mean of how much of what the customer said that way of asking covers (the
 * answer's units at half value) and how much of it the customer covered, so neither a one-word
 * phrasing inside a long question nor a long entry sharing one word scores high. Each unit
 * weighs its rarity in the knowledge base.
 */
function scoreAll(index: MatchIndex, query: Weighted): Map<number, number> {
  const s = scratchOf(index);
  const idf = (u: string): number => index.idf.get(u) ?? index.unknownIdf;
  let total = 0;
  const touchedTexts: number[] = [];
  const touchedEntries: number[] = [];
  for (const [unit, w] of query) {
    const x = w * idf(unit);
    total += x;
    const answers = index.answerPostings.get(unit);
    if (answers) {
      for (const e of answers) {
        if (s.answer[e] === 0) touchedEntries.push(e);
        s.answer[e]! += x;
      }
    }
    const texts = index.textPostings.get(unit);
    if (!texts) continue;
    for (let k = 0; k < texts.texts.length; k++) {
      const t = texts.texts[k]!;
      if (s.inText[t] === 0) touchedTexts.push(t);
      s.inText[t]! += x;
      s.textCovered[t]! += texts.weights[k]!;
      if (texts.inAnswer[k]) s.both[t]! += x;
    }
  }
  const scored: number[] = [];
  for (const t of touchedTexts) {
    const e = index.textEntry[t]!;
    const covered = s.inText[t]! + ANSWER_SHARE * (s.answer[e]! - s.both[t]!);
    const score = total === 0 ? 0 : Math.min(1, covered / total) ** QUERY_SIDE * Math.min(1, s.textCovered[t]! / index.textTotal[t]!) ** (1 - QUERY_SIDE);
    if (s.best[e] === 0 && score > 0) scored.push(e);
    if (score > s.best[e]!) s.best[e] = score;
    s.inText[t] = 0;
    s.both[t] = 0;
    s.textCovered[t] = 0;
  }
  const best = new Map<number, number>();
  for (const e of scored) {
    best.set(e, s.best[e]!);
    s.best[e] = 0;
  }
  // An entry whose answer alone shares units is a candidate too, though no way of asking is covered.
  for (const e of touchedEntries) {
    if (!best.has(e)) best.set(e, 0);
    s.answer[e] = 0;
  }
  return best;
}

/** Entries one of whose ways of asking holds one of `units`. */
function asking(index: MatchIndex, units: readonly string[]): Set<number> {
  const out = new Set<number>();
  for (const u of units) {
    const texts = index.textPostings.get(u);
    if (texts) for (const t of texts.texts) out.add(index.textEntry[t]!);
  }
  return out;
}

/** Entries for the recent customer messages (newest first), best first, each with its 0..1 score. */
export function rankEntries(index: MatchIndex, recent: readonly string[], limit: number): Ranked[] {
  if (recent.length === 0 || index.entries.length === 0) return [];
  // Each message is split once (jieba, stemming): the newest is weighed alone as well as with the rest.
  const messages = unitsOf(index, recent);
  const query = weigh(messages);
  let scores = scoreAll(index, query);
  if (recent.length > 1) {
    // Earlier messages keep a follow-up ("and for business accounts?") on its topic, but only for
    // entries whose ways of asking share something with the newest message; otherwise an exact
    // match of the previous question outscores a new, different one and the customer gets the
    // previous answer again. The question, not the answer: "3" in "where is order 3?" is no reason
    // to lift "delivery takes 3 to 5 days".
    const newest = weigh(messages.slice(0, 1));
    const content = [...newest].filter(([, w]) => w >= 1).map(([unit]) => unit);
    const onTopic = content.length === 0 ? null : asking(index, content);
    // A new question is also matched on its own, so it gets its own answer. One that begins as a
    // continuation ("and for business accounts?") counts less on its own than read with the last
    // one, unless it is a whole question ("and how long does delivery take?").
    const alone = FOLLOW_UP.test(recent[0]!.trim()) ? CONTINUATION_ALONE : 1;
    const merged = new Map<number, number>();
    for (const [e, score] of scoreAll(index, newest)) merged.set(e, score * alone);
    for (const [e, score] of scores) if (onTopic === null || onTopic.has(e)) merged.set(e, Math.max(merged.get(e) ?? 0, score));
    scores = merged;
  }
  const cjk = isCjkText(recent[0]!) ? 1 : 0;
  const ranked: Ranked[] = [];
  for (const [e, score] of scores) ranked.push({ entry: index.entries[e]!, score: score * (index.cjk[e] === cjk ? 1 : OTHER_LANGUAGE) });
  // Best first; ties in id order, so the same question always gets the same answer.
  ranked.sort((a, b) => b.score - a.score || a.entry.id - b.entry.id);
  return ranked.slice(0, limit);
}
