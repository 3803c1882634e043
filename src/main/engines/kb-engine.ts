import type { Engine, EngineAnswer, EngineRequest } from './engine.ts';
import { searchTerms, textUnits } from './text-units.ts';
import type { RankFn } from './embeddings/hybrid-rank.ts';

export interface KbCandidate {
  id: number;
  question: string;
  answer: string;
  /** "Also asked as": other ways customers put the question. */
  phrasings: readonly string[];
}

/** What the engine may ask of the knowledge base: search results, never the database. */
export interface KnowledgeSource {
  match(ftsExpression: string, limit: number): KbCandidate[];
  containing(term: string, limit: number): KbCandidate[];
}

export interface KbEngineOptions {
  /** Answers scoring below this hand off (0..1). */
  threshold: number;
  /** How many recent customer messages form the query. */
  queryMessages: number;
}

export const DEFAULT_KB_ENGINE_OPTIONS: KbEngineOptions = { threshold: 0.45, queryMessages: 3 };

/** The latest message counts fully, each earlier one less, so a follow-up keeps its topic. */
const RECENCY = [1, 0.6, 0.4, 0.3, 0.2];

const ENOUGH_CANDIDATES = 5;
/** Each bigram is a scan of the knowledge base; a few bound the cost on large ones. */
const MAX_BIGRAM_SCANS = 8;

type Weighted = Map<string, number>;

function weigh(texts: string[]): Weighted {
  const weights: Weighted = new Map();
  texts.forEach((text, age) => {
    const recency = RECENCY[Math.min(age, RECENCY.length - 1)]!;
    for (const u of textUnits(text)) {
      const w = recency * u.weight;
      if (w > (weights.get(u.unit) ?? 0)) weights.set(u.unit, w);
    }
  });
  return weights;
}

interface EntryUnits {
  question: string;
  answer: string;
  qUnits: Map<string, number>;
  aUnits: Set<string>;
}
/**
 * Units of an entry, kept while the entry object lives: the in-memory index (kb-index.ts) hands out
 * the same objects until the knowledge base changes, so each entry is split once, not per question.
 */
const unitsCache = new WeakMap<KbCandidate, EntryUnits>();

function entryUnits(entry: KbCandidate): EntryUnits {
  const cached = unitsCache.get(entry);
  if (cached && cached.question === entry.question && cached.answer === entry.answer) return cached;
  const units = {
    question: entry.question,
    answer: entry.answer,
    qUnits: new Map(textUnits(entry.question).map((u) => [u.unit, u.weight])),
    aUnits: new Set(textUnits(entry.answer).map((u) => u.unit)),
  };
  unitsCache.set(entry, units);
  return units;
}

/**
 * Similarity in 0..1: mostly how much of the customer's words the entry covers (its question
 * fully, its answer at half value), partly how much of the entry's question the customer
 * covered, so a long entry that shares one word does not win.
 */
export function scoreEntry(query: Weighted, entry: KbCandidate): number {
  const { qUnits, aUnits } = entryUnits(entry);
  let total = 0;
  let covered = 0;
  for (const [unit, w] of query) {
    total += w;
    if (qUnits.has(unit)) covered += w;
    else if (aUnits.has(unit)) covered += w * 0.5;
  }
  let qTotal = 0;
  let qCovered = 0;
  for (const [unit, w] of qUnits) {
    qTotal += w;
    if (query.has(unit)) qCovered += w;
  }
  if (total === 0 || qTotal === 0) return 0;
  return 0.65 * (covered / total) + 0.35 * (qCovered / qTotal);
}

/**
 * Knowledge-base entries for the recent customer messages (newest first), best first, each with
 * its 0..1 score. The built-in engine answers with the best; the LLM engine grounds on the top few.
 */
export function rankKnowledge(source: KnowledgeSource, recent: string[], limit: number): Array<{ entry: KbCandidate; score: number }> {
  if (recent.length === 0) return [];
  const terms = searchTerms(recent.join('\n'));
  const candidates = new Map<number, KbCandidate>();
  if (terms.indexed.length > 0) {
    const expression = terms.indexed.map((t) => `"${t}"`).join(' OR ');
    for (const c of source.match(expression, 25)) candidates.set(c.id, c);
  }
  if (candidates.size < ENOUGH_CANDIDATES) {
    for (const t of terms.bigrams.slice(0, MAX_BIGRAM_SCANS)) for (const c of source.containing(t, 25)) candidates.set(c.id, c);
  }
  const query = weigh(recent);
  const newest = recent.length > 1 ? weigh(recent.slice(0, 1)) : query;
  // The newest message's meaningful units (no function words, no single CJK characters).
  const newestContent = [...newest].filter(([, w]) => w >= 1).map(([unit]) => unit);
  const coversNewest = (c: KbCandidate): boolean => {
    const { qUnits } = entryUnits(c);
    return newestContent.length === 0 || newestContent.some((u) => qUnits.has(u));
  };
  // Earlier messages keep a follow-up ("and for business accounts?") on its topic, but only for
  // entries whose question shares something with the newest message: otherwise an exact match of
  // the previous question outscores a new, different one, and the customer gets the previous answer
  // again. The question, not the answer: "3" in "where is order 3?" is no reason to lift "delivery
  // takes 3 to 5 days" above "Where is my order?".
  const scoreOf = (c: KbCandidate): number => (newest === query ? scoreEntry(query, c) : Math.max(scoreEntry(newest, c), coversNewest(c) ? scoreEntry(query, c) : 0));
  return [...candidates.values()]
    .map((c) => ({ entry: c, score: scoreOf(c) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, limit);
}

/**
 * The offline default: answers with the best knowledge-base entry, or hands off. A configured
 * engine that answers from the knowledge base passes its name and its ranking (hybrid, with an
 * embedding model); `cause` then also says when that ranking fell back to words only.
 */
export function createKbEngine(source: KnowledgeSource, options: KbEngineOptions = DEFAULT_KB_ENGINE_OPTIONS, ranking?: { name: string; rank?: RankFn }): Engine {
  return {
    name: ranking?.name ?? 'kb',
    async answer(request: EngineRequest, signal?: AbortSignal): Promise<EngineAnswer> {
      const recent = request.context
        .filter((l) => l.role === 'customer' && l.content.trim() !== '')
        .slice(-options.queryMessages)
        .reverse()
        .map((l) => l.content);
      if (recent.length === 0) {
        return { content: request.fallbackText, handoff: true, confidence: null, sources: [], cause: 'no customer text to answer' };
      }
      const { ranked, cause: rankCause } = ranking?.rank
        ? await ranking.rank(recent, 25, signal ?? new AbortController().signal, request.budget)
        : { ranked: rankKnowledge(source, recent, 25), cause: undefined };
      const note = rankCause ? `; ${rankCause}` : '';
      const sources = ranked.slice(0, 3).map((r) => ({ id: r.entry.id, score: Math.round(r.score * 1000) / 1000 }));
      const best = ranked[0];
      if (!best || best.score < options.threshold) {
        return {
          content: request.fallbackText,
          handoff: true,
          confidence: best ? sources[0]!.score : 0,
          sources,
          cause: (best ? `best match scored ${sources[0]!.score}, below ${options.threshold}` : 'no knowledge-base entry matched') + note,
        };
      }
      return { content: best.entry.answer, handoff: false, confidence: sources[0]!.score, sources, ...(rankCause ? { cause: rankCause } : {}) };
    },
  };
}
