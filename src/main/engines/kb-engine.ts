import type { Engine, EngineAnswer, EngineRequest } from './engine.ts';
import type { RankFn } from './embeddings/hybrid-rank.ts';

export interface KbCandidate {
  id: number;
  question: string;
  answer: string;
  /** "Also asked as": other ways customers put the question. */
  phrasings: readonly string[];
}

/** What the engine may ask of the knowledge base: ranked entries, never the database. */
export interface KnowledgeSource {
  /** Entries for the recent customer messages (newest first), best first, each with a 0..1 score. */
  rank(recent: readonly string[], limit: number): Array<{ entry: KbCandidate; score: number }>;
}

export interface KbEngineOptions {
  /** Answers scoring below this hand off (0..1); a function is asked at each question (set from the console). */
  threshold: number | (() => number);
  /** How many recent customer messages form the query. */
  queryMessages: number;
}

export const DEFAULT_KB_ENGINE_OPTIONS = { threshold: 0.55, queryMessages: 3 } as const satisfies KbEngineOptions;

/**
 * Knowledge-base entries for the recent customer messages (newest first), best first, each with
 * its 0..1 score. The built-in engine answers with the best; the LLM engine grounds on the top few.
 */
export function rankKnowledge(source: KnowledgeSource, recent: readonly string[], limit: number): Array<{ entry: KbCandidate; score: number }> {
  return recent.length === 0 ? [] : source.rank(recent, limit);
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
      const threshold = typeof options.threshold === 'function' ? options.threshold() : options.threshold;
      const sources = ranked.slice(0, 3).map((r) => ({ id: r.entry.id, score: Math.round(r.score * 1000) / 1000 }));
      const best = ranked[0];
      if (!best || best.score < threshold) {
        return {
          content: request.fallbackText,
          handoff: true,
          confidence: best ? sources[0]!.score : 0,
          sources,
          cause: (best ? `best match scored ${sources[0]!.score}, below ${threshold}` : 'no knowledge-base entry matched') + note,
        };
      }
      return { content: best.entry.answer, handoff: false, confidence: sources[0]!.score, sources, ...(rankCause ? { cause: rankCause } : {}) };
    },
  };
}
