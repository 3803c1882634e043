import type { StoreContract } from '../store/contract.ts';
import type { KbVectorsWrite } from '../engines/embeddings/entry-vectors.ts';

/** Vectors computed by the thread that ranks, stored by the writer thread (the engine thread's connection is read-only). */
export interface KbVectorsCommand {
  kind: 'kb_vectors';
  write: KbVectorsWrite;
  now: number;
}

export async function saveKbVectors(store: StoreContract, command: KbVectorsCommand): Promise<{ kind: 'changed'; count: number }> {
  const { entryId, model, keep, add } = command.write;
  return { kind: 'changed', count: await store.kbVectors.save(entryId, model, keep, add, command.now) };
}
