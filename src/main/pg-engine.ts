import type pg from 'pg';
import type { Clock } from '../shared/clock.ts';
import type { SecretBox } from './auth/secret-box.ts';
import type { ConfigMirror } from './store/pg/config-mirror.ts';
import { pgStore } from './store/pg/pg-store.ts';
import { inPgTransaction } from './store/pg/transaction.ts';
import { pgKbVectorsFor } from './store/pg/kb-vector-queries.ts';
import type { Engine } from './engines/engine.ts';
import { createIndexedKnowledge } from './engines/kb-index.ts';
import { thresholdSource } from './engines/kb-threshold.ts';
import { createSemantic, type SemanticDeps } from './engines/embeddings/semantic.ts';
import type { VectorAccess } from './engines/embeddings/entry-vectors.ts';
import { configuredEngineLoader, createServiceEngine } from './engines/service-engine.ts';
import { saveKbVectors } from './conversations/kb-vector-commands.ts';
import { PG_INGEST_ATTEMPTS } from './conversations/pg-ingest-runner.ts';

export interface PgEngineDeps {
  pool: pg.Pool;
  mirror: ConfigMirror;
  box: SecretBox;
  clock: Clock;
  log: (line: string) => void;
  /** serve's kbThreshold: the threshold unless an admin set one from the console. */
  kbThreshold: number;
  engineOf: (clientId: string) => string;
  /** An injected engine (tests) answers instead of the router; nothing is embedded then. */
  engine?: Engine;
  /** Tests: where in the entries this node starts computing vectors (entry-vectors.ts startAt). */
  vectorsStartAt?: number;
  makeClient?: SemanticDeps['makeClient'];
}

/**
 * The stored vectors on PostgreSQL, which every node reads and writes: the entries and their
 * version from this node's mirror (re-read within a second of an edit anywhere), the vectors
 * loaded once per model, and before each batch is embedded, what other nodes stored of its
 * entries meanwhile. A save is a transaction of its own; two nodes saving one entry's vectors
 * upsert the same rows (kb-vector-queries.ts), so the second save changes nothing it matters.
 */
export function pgVectorAccess(pool: pg.Pool, mirror: ConfigMirror, clock: Clock): VectorAccess {
  const store = pgStore(pool);
  return {
    entries: () => mirror.kb.all(),
    version: () => mirror.kb.version(),
    stored: (model) => store.kbVectors.forModel(model),
    storedFor: (model, entryIds) => pgKbVectorsFor(pool, model, entryIds),
    save: async (write) => {
      await inPgTransaction(pool, (tx) => saveKbVectors(pgStore(tx), { kind: 'kb_vectors', write, now: clock.now() }), { attempts: PG_INGEST_ATTEMPTS });
    },
  };
}

/** A PostgreSQL node's engine: the same router as SQLite's service, on the mirror, matching by meaning where a client's engine names an embedding model. */
export function createPgEngine(d: PgEngineDeps) {
  const knowledge = createIndexedKnowledge(d.mirror.kb);
  const threshold = thresholdSource(d.mirror.settings, d.kbThreshold);
  const semantic = d.engine
    ? null
    : createSemantic({
        knowledge,
        access: pgVectorAccess(d.pool, d.mirror, d.clock),
        clock: d.clock,
        log: d.log,
        ...(d.makeClient ? { makeClient: d.makeClient } : {}),
        ...(d.vectorsStartAt !== undefined ? { startAt: d.vectorsStartAt } : {}),
      });
  const engine = d.engine ?? createServiceEngine({ knowledge, threshold, semantic, engineOf: d.engineOf, load: configuredEngineLoader(d.mirror.engines, d.box) });
  return { engine, knowledge, threshold, semantic, close: () => semantic?.close() };
}
