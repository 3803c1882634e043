import type { Engine, EngineAnswer, EngineRequest } from './engine.ts';
import { createOpenAiEngine, DEFAULT_SYSTEM_PROMPT } from './openai-engine.ts';
import { createKbEngine, DEFAULT_KB_ENGINE_OPTIONS, type KbEngineOptions, type KnowledgeSource } from './kb-engine.ts';
import type { Semantic } from './embeddings/semantic.ts';
import { BUILTIN_ENGINE, type EngineConfig } from '../../shared/engine-config.ts';

export interface ConfiguredEngine {
  name: string;
  config: EngineConfig;
  /** Opens the sealed key: called only when the engine is (re)built, not per request. */
  apiKey: () => string | null;
  updatedAt: number;
}

export interface RouterDeps {
  builtin: Engine;
  knowledge: KnowledgeSource;
  /**
   * Matching by meaning for engines that name an embedding model, and the built-in engine's
   * options for those that answer from the knowledge base. Without it such engines match by words.
   */
  semantic?: { rankerFor: Semantic['rankerFor']; kbOptions: KbEngineOptions };
  /** The engine name a client chose (its settings), "kb" when none. */
  engineOf: (clientId: string) => string;
  /** A configured engine with its opened key; undefined when there is none by that name. */
  load: (name: string) => ConfiguredEngine | undefined;
}

/** An engine that hands every question to a human, saying why. */
function notConfigured(name: string, cause: string): Engine {
  return { name, answer: async (r): Promise<EngineAnswer> => ({ content: r.fallbackText, handoff: true, confidence: null, sources: [], cause }) };
}

/**
 * One Engine that answers with each client's chosen engine. Engines are built once per saved
 * version, so a changed model or key takes effect on the next request without a restart.
 */
export function createEngineRouter(deps: RouterDeps): Engine & { resolve(clientId: string): Engine } {
  const cache = new Map<string, { updatedAt: number; engine: Engine }>();

  function engineNamed(name: string): Engine | { missing: string } {
    if (name === BUILTIN_ENGINE) return deps.builtin;
    const configured = deps.load(name);
    if (!configured) return { missing: name };
    const cached = cache.get(name);
    if (cached && cached.updatedAt === configured.updatedAt) return cached.engine;
    const engine = buildConfigured(name, configured);
    cache.set(name, { updatedAt: configured.updatedAt, engine });
    return engine;
  }

  function buildConfigured(name: string, configured: ConfiguredEngine): Engine {
    const { config } = configured;
    const apiKey = configured.apiKey();
    const rank = config.embeddingModel && deps.semantic ? deps.semantic.rankerFor(config.baseUrl, config.embeddingModel, apiKey) : undefined;
    if (config.answerFrom === 'kb') return createKbEngine(deps.knowledge, deps.semantic?.kbOptions ?? DEFAULT_KB_ENGINE_OPTIONS, { name, rank });
    const { model } = config;
    // The schema requires a chat model unless answers come from the knowledge base; a row edited by hand may lack it.
    if (model === undefined) return notConfigured(name, `engine "${name}" has no chat model`);
    return createOpenAiEngine({ name, ...config, model, apiKey, systemPrompt: config.systemPrompt ?? DEFAULT_SYSTEM_PROMPT }, { knowledge: deps.knowledge, rank });
  }

  const resolve = (clientId: string): Engine => {
    const e = engineNamed(deps.engineOf(clientId));
    return 'missing' in e ? notConfigured(e.missing, `engine "${e.missing}" is not configured`) : e;
  };

  return {
    name: 'router',
    resolve,
    nameFor: (request) => (request.clientId ? resolve(request.clientId) : deps.builtin).name,
    async answer(request: EngineRequest, signal: AbortSignal): Promise<EngineAnswer> {
      const engine = request.clientId ? resolve(request.clientId) : deps.builtin;
      const answer = await engine.answer(request, signal);
      return { ...answer, engine: answer.engine ?? engine.name };
    },
  };
}
