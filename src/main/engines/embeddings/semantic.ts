import type { Clock } from '../../../shared/clock.ts';
import type { KnowledgeSource } from '../kb-engine.ts';
import { createEmbeddingsClient, DEFAULT_EMBEDDINGS, type EmbeddingsClient } from './embeddings-client.ts';
import { createEntryVectors, type EntryVectors, type VectorAccess } from './entry-vectors.ts';
import { createHybridRanker, type RankFn } from './hybrid-rank.ts';

export interface SemanticDeps {
  knowledge: KnowledgeSource;
  access: VectorAccess;
  clock: Clock;
  log: (line: string) => void;
  /** Tests point engines at a fake server with other limits; default: DEFAULT_EMBEDDINGS. */
  makeClient?: (baseUrl: string, model: string, apiKey: string | null) => EmbeddingsClient;
  /** Where in the entries this node starts computing (entry-vectors.ts; several nodes). */
  startAt?: number;
}

/**
 * Semantic matching for the engines that name an embedding model: one vector set per model
 * (engines sharing a model share its vectors), refreshed with the latest saved engine's URL and
 * key, and a hybrid ranker per engine.
 */
export function createSemantic(deps: SemanticDeps) {
  const sets = new Map<string, EntryVectors>();
  const makeClient =
    deps.makeClient ?? ((baseUrl: string, model: string, apiKey: string | null) => createEmbeddingsClient({ baseUrl, model, apiKey, ...DEFAULT_EMBEDDINGS }, { clock: deps.clock }));
  return {
    /** The ranking for an engine with an embedding model; built when the engine is (once per saved version). */
    rankerFor(baseUrl: string, model: string, apiKey: string | null): RankFn {
      const client = makeClient(baseUrl, model, apiKey);
      let vectors = sets.get(model);
      if (!vectors) {
        vectors = createEntryVectors(model, deps.access, { clock: deps.clock, log: deps.log, ...(deps.startAt !== undefined ? { startAt: deps.startAt } : {}) });
        sets.set(model, vectors);
      }
      vectors.useClient(client);
      return createHybridRanker({ knowledge: deps.knowledge, vectors, client, clock: deps.clock });
    },
    /** The vector set of a model, once an engine used it (tests, the bench). */
    vectorsOf: (model: string): EntryVectors | undefined => sets.get(model),
    close(): void {
      for (const s of sets.values()) s.close();
    },
  };
}

export type Semantic = ReturnType<typeof createSemantic>;
