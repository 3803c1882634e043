import type { Engine, EngineAnswer, EngineRequest } from './engine.ts';
import { createOpenAiEngine, DEFAULT_SYSTEM_PROMPT } from './openai-engine.ts';
import type { KnowledgeSource } from './kb-engine.ts';
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
  /** The engine name a client chose (its settings), "kb" when none. */
  engineOf: (clientId: string) => string;
  /** A configured engine with its opened key; undefined when there is none by that name. */
  load: (name: string) => ConfiguredEngine | undefined;
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
    const engine = createOpenAiEngine(
      { name, ...configured.config, apiKey: configured.apiKey(), systemPrompt: configured.config.systemPrompt ?? DEFAULT_SYSTEM_PROMPT },
      { knowledge: deps.knowledge },
    );
    cache.set(name, { updatedAt: configured.updatedAt, engine });
    return engine;
  }

  const resolve = (clientId: string): Engine => {
    const e = engineNamed(deps.engineOf(clientId));
    if ('missing' in e) {
      return {
        name: e.missing,
        answer: async (r): Promise<EngineAnswer> => ({ content: r.fallbackText, handoff: true, confidence: null, sources: [], cause: `engine "${e.missing}" is not configured` }),
      };
    }
    return e;
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
