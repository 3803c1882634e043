import type { Db } from './db.ts';

/** One stored embedding: of which entry, of which of its texts (by hash), under which model. */
export interface StoredVector {
  entryId: number;
  textHash: string;
  vector: Float32Array;
}

interface Raw {
  entry_id: number;
  text_hash: string;
  dims: number;
  vector: Uint8Array;
}

// Float32 in the platform's byte order: little-endian on every machine Switchboard runs on
// (x86-64, arm64), and the file never leaves the installation that wrote it.
const toBlob = (v: Float32Array): Uint8Array => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
// Copied into a buffer of its own: the row's bytes need not be 4-byte aligned.
const fromBlob = (b: Uint8Array, dims: number): Float32Array => {
  if (b.byteLength !== dims * 4) throw new Error(`kb_vectors: a vector of ${b.byteLength} bytes is not ${dims} floats`);
  return new Float32Array(b.slice().buffer);
};

export function kbVectorQueries(db: Db) {
  const forModel = db.prepare('SELECT entry_id, text_hash, dims, vector FROM kb_vectors WHERE model = ? ORDER BY entry_id');
  const prune = db.prepare('DELETE FROM kb_vectors WHERE entry_id = ? AND model = ? AND text_hash NOT IN (SELECT value FROM json_each(?))');
  // An entry removed while its vectors were computed gets none (the foreign key would refuse them).
  const insert = db.prepare(
    `INSERT OR REPLACE INTO kb_vectors (entry_id, model, text_hash, dims, vector, created_at)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM kb_entries WHERE id = ?1)`,
  );
  const count = db.prepare('SELECT count(*) AS n FROM kb_vectors WHERE model = ?');
  return {
    /** Every vector stored for `model`, by entry. */
    forModel(model: string): StoredVector[] {
      return (forModel.all(model) as unknown as Raw[]).map((r) => ({ entryId: r.entry_id, textHash: r.text_hash, vector: fromBlob(r.vector, r.dims) }));
    },
    /**
     * The entry's vectors under `model` become those whose hash is in `keep` or `add`: rows of texts
     * the entry no longer has go, the new ones are stored. Returns the rows added (0 when the
     * entry is gone).
     */
    save(entryId: number, model: string, keep: readonly string[], add: ReadonlyArray<{ hash: string; vector: Float32Array }>, now: number): number {
      prune.run(entryId, model, JSON.stringify([...keep, ...add.map((a) => a.hash)]));
      let added = 0;
      for (const a of add) added += Number(insert.run(entryId, model, a.hash, a.vector.length, toBlob(a.vector), now).changes);
      return added;
    },
    count(model: string): number {
      return (count.get(model) as { n: number }).n;
    },
  };
}

export type KbVectorQueries = ReturnType<typeof kbVectorQueries>;
