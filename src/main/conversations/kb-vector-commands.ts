import type { Store } from '../store/index.ts';
import type { KbVectorsWrite } from '../engines/embeddings/entry-vectors.ts';

/** Vectors computed by the thread that ranks, stored by the writer thread (the engine thread's connection is read-only). */
export interface KbVectorsCommand {
  kind: 'kb_vectors';
  write: KbVectorsWrite;
  now: number;
}

export function saveKbVectors(store: Store, command: KbVectorsCommand): { kind: 'changed'; count: number } {
  const { entryId, model, keep, add } = command.write;
  return { kind: 'changed', count: store.kbVectors.save(entryId, model, keep, add, command.now) };
}
