import type { SecretBox } from '../auth/secret-box.ts';
import type { EngineRow } from '../store/engines.ts';
import type { Engine } from './engine.ts';
import { createKbEngine, type KnowledgeSource } from './kb-engine.ts';
import type { Semantic } from './embeddings/semantic.ts';
import { createEngineRouter, type ConfiguredEngine } from './router.ts';

/** A saved engine by name, its key opened only when the router (re)builds it. */
export function configuredEngineLoader(engines: { get(name: string): EngineRow | undefined }, box: SecretBox): (name: string) => ConfiguredEngine | undefined {
  return (name) => {
    const row = engines.get(name);
    if (!row) return undefined;
    const sealed = row.apiKeySealed;
    return { name, config: row.config, apiKey: () => (sealed ? box.open(sealed) : null), updatedAt: row.updatedAt };
  };
}

export interface ServiceEngineDeps {
  knowledge: KnowledgeSource;
  /** The knowledge-base threshold now (an admin may change it from the console). */
  threshold: () => number;
  /** Matching by meaning for engines naming an embedding model; null: by words only. */
  semantic: Semantic | null;
  engineOf: (clientId: string) => string;
  load: (name: string) => ConfiguredEngine | undefined;
}

/** The engine a service answers with: each client's chosen engine, the built-in knowledge-base one by default (SQLite and PostgreSQL alike). */
export function createServiceEngine(d: ServiceEngineDeps): Engine {
  const kbOptions = { threshold: d.threshold, queryMessages: 3 };
  return createEngineRouter({
    builtin: createKbEngine(d.knowledge, kbOptions),
    knowledge: d.knowledge,
    ...(d.semantic ? { semantic: { rankerFor: d.semantic.rankerFor, kbOptions } } : {}),
    engineOf: d.engineOf,
    load: d.load,
  });
}
