import type { Clock } from '../../../shared/clock.ts';
import type { EngineBudget } from '../engine.ts';
import { rankKnowledge, type KbCandidate, type KnowledgeSource } from '../kb-engine.ts';
import type { EmbeddingsClient } from './embeddings-client.ts';
import type { EntryVectors } from './entry-vectors.ts';
import { dot, mix } from './vector-math.ts';

export interface Ranked {
  entry: KbCandidate;
  score: number;
}

/**
 * Knowledge-base entries for the recent customer messages (newest first), best first, scored
 * 0..1. `cause` says why the ranking fell back to words only, for the answer's trace.
 */
export type RankFn = (recent: string[], limit: number, signal: AbortSignal, budget?: EngineBudget) => Promise<{ ranked: Ranked[]; cause?: string }>;

/** The latest message counts fully, each earlier one less (as the lexical ranking weighs them). */
const RECENCY = [1, 0.6, 0.4, 0.3, 0.2];
/** Lexical candidates considered, as rankKnowledge's own search takes; the semantic side adds its best as many. */
const CANDIDATES = 25;
/** The question's embedding is one short attempt: a customer is waiting, and words answer meanwhile. */
const QUERY_TIMEOUT_MS = 3000;
/** After a failed question embedding, questions are matched by words only for this long (no wait on a server that is down). */
const BREAKER_MS = 30_000;
/** With fewer entries than this, the median is no estimate of "unrelated" and this one is used. */
const MIN_ENTRIES_FOR_MEDIAN = 8;
const DEFAULT_UNRELATED = 0.5;

/**
 * A cosine as a 0..1 score on the lexical score's scale. Models differ in where "unrelated"
 * lies (nomic-embed-text around 0.4-0.5, OpenAI's text-embedding-3 around 0.1-0.2), so the
 * baseline is measured on the knowledge base itself: the median of the question's best cosine
 * with each entry (most entries are unrelated to any one question). At the baseline the score
 * is 0, at an identical text 1, linear between.
 */
export function calibrated(cosine: number, unrelated: number): number {
  if (unrelated >= 1) return 0;
  return Math.min(1, Math.max(0, (cosine - unrelated) / (1 - unrelated)));
}

/** How much of the gap between the lexical and the semantic score meaning may close. */
export const SEMANTIC_WEIGHT = 0.5;

/**
 * Words are the floor: an entry keeps its lexical score, so the hybrid ranking never hands off
 * what the words alone answered. Meaning lifts it by half the gap to its calibrated semantic
 * score, so an entry that shares no word with the question is answered only when its meaning is
 * nearly the same (semantic ≥ 0.9 at the default threshold 0.45), and partial word evidence plus
 * close meaning answers. Measured on the evaluation set (bench kb-quality --embeddings-url):
 * taking the larger of the two scores answered about three times as many uncovered questions as
 * the words alone with the test model; this blend kept that rise to less than half as much for
 * most of the paraphrases gained. No real model could be run here to tune it further.
 */
export const combine = (lexical: number, semantic: number): number => Math.max(lexical, (1 - SEMANTIC_WEIGHT) * lexical + SEMANTIC_WEIGHT * semantic);

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export interface HybridDeps {
  knowledge: KnowledgeSource;
  vectors: EntryVectors;
  /** The question's client (the engine's URL, key and model). */
  client: EmbeddingsClient;
  clock: Clock;
}

/**
 * Lexical and semantic matching combined. One embeddings request per question (its recent
 * messages); any failure of it (down, slow, wrong dimensions) falls back to the lexical ranking
 * with the cause, never failing the answer.
 */
export function createHybridRanker(deps: HybridDeps): RankFn {
  let brokenUntil = 0;
  let brokenBecause = '';
  return async (lines, limit, signal, budget) => {
    const recent = lines.filter((l) => l.trim() !== '');
    const lexical = rankKnowledge(deps.knowledge, recent, CANDIDATES);
    const wordsOnly = (cause: string): { ranked: Ranked[]; cause: string } => ({ ranked: lexical.slice(0, limit), cause: `matched by words only: ${cause}` });
    if (recent.length === 0) return { ranked: [] };
    // Once per model and node on PostgreSQL (one query); nothing to wait for on SQLite.
    await deps.vectors.loaded();
    const snap = deps.vectors.snapshot();
    if (snap.rows.length === 0) return snap.total === 0 ? { ranked: [] } : wordsOnly(`the knowledge base's vectors (${deps.client.model}) are still being computed`);
    const now = deps.clock.now();
    if (now < brokenUntil) return wordsOnly(`${brokenBecause} (${Math.ceil((now - (brokenUntil - BREAKER_MS)) / 1000)} s ago)`);
    const left = budget ? budget.endsAt - budget.clock.now() : Number.POSITIVE_INFINITY;
    let query: Float32Array[];
    try {
      // At most a third of what is left: an LLM engine still has to write the answer.
      query = await deps.client.embed(recent, signal, { timeoutMs: Math.max(1, Math.min(QUERY_TIMEOUT_MS, Math.floor(left / 3))), retries: 0 });
    } catch (error) {
      signal.throwIfAborted();
      brokenUntil = deps.clock.now() + BREAKER_MS;
      brokenBecause = `embeddings failed: ${(error as Error).message}`;
      return wordsOnly(brokenBecause);
    }
    if (snap.dims !== null && query[0]!.length !== snap.dims) {
      deps.vectors.acceptDims(query[0]!.length);
      return wordsOnly(`the question's vector has ${query[0]!.length} dimensions, the stored ones ${snap.dims}: they are computed again`);
    }
    const mixed = query.length > 1 ? mix(query, query.map((_, i) => RECENCY[Math.min(i, RECENCY.length - 1)]!)) : null;
    // An entry's best text (its question or a phrasing) against the newest message, or against the
    // recent ones mixed (a follow-up keeps its topic); the newest alone wins when the topic changed.
    const cosines = snap.rows.map((r) => {
      let best = -1;
      for (const v of r.vectors) best = Math.max(best, dot(query[0]!, v), mixed ? dot(mixed, v) : -1);
      return best;
    });
    const unrelated = snap.rows.length >= MIN_ENTRIES_FOR_MEDIAN ? median(cosines) : DEFAULT_UNRELATED;
    const semantic = new Map<number, { entry: KbCandidate; score: number }>();
    snap.rows.forEach((r, i) => semantic.set(r.entry.id, { entry: r.entry, score: calibrated(cosines[i]!, unrelated) }));
    const candidates = new Map<number, KbCandidate>();
    for (const l of lexical) candidates.set(l.entry.id, l.entry);
    for (const s of [...semantic.values()].sort((a, b) => b.score - a.score).slice(0, CANDIDATES)) if (s.score > 0) candidates.set(s.entry.id, s.entry);
    const lexicalOf = new Map(lexical.map((l) => [l.entry.id, l.score]));
    const ranked = [...candidates.values()]
      .map((entry) => ({ entry, score: combine(lexicalOf.get(entry.id) ?? 0, semantic.get(entry.id)?.score ?? 0) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, limit);
    return snap.pending > 0 ? { ranked, cause: `${snap.pending} of ${snap.total} entries are matched by words only until their vectors are computed` } : { ranked };
  };
}
