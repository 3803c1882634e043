import { z } from 'zod';
import type { StoreContract } from '../contract.ts';
import type { StoredVector } from '../kb-vectors.ts';
import { int8, type PgQueryable } from './pool.ts';

const rowSchema = z.object({ entry_id: int8, text_hash: z.string(), dims: z.number().int(), vector: z.instanceof(Uint8Array) });

// float32 little-endian, the bytes SQLite's BLOB holds (a copy from SQLite moves them unchanged).
const toBytes = (v: Float32Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
// Copied into a buffer of its own: a Buffer's bytes sit at any offset of a shared pool, and
// Buffer#slice is a view of it, not a copy (a 137-float vector read as the pool's 16384 floats).
const fromBytes = (b: Uint8Array, dims: number): Float32Array => {
  if (b.byteLength !== dims * 4) throw new Error(`kb_vectors: a vector of ${b.byteLength} bytes is not ${dims} floats`);
  return new Float32Array(new Uint8Array(b).buffer);
};

const storedOf = (raw: unknown): StoredVector => {
  const v = rowSchema.parse(raw);
  return { entryId: v.entry_id, textHash: v.text_hash, vector: fromBytes(v.vector, v.dims) };
};

/** The stored vectors of some entries under a model: what other nodes saved since this one loaded (entry-vectors.ts storedFor). */
export async function pgKbVectorsFor(db: PgQueryable, model: string, entryIds: readonly number[]): Promise<StoredVector[]> {
  const r = await db.query('SELECT entry_id, text_hash, dims, vector FROM kb_vectors WHERE model = $1 AND entry_id = ANY($2::bigint[]) ORDER BY entry_id, text_hash COLLATE "C"', [model, entryIds]);
  return r.rows.map(storedOf);
}

/** Embeddings of the knowledge base's texts (kb-vectors.ts) on PostgreSQL: the same rows and order. */
export function pgKbVectorQueries(db: PgQueryable): StoreContract['kbVectors'] {
  return {
    // SQLite's index (model, entry_id) of a WITHOUT ROWID table ends in the key's text_hash: ties go by its bytes.
    async forModel(model: string): Promise<StoredVector[]> {
      const r = await db.query('SELECT entry_id, text_hash, dims, vector FROM kb_vectors WHERE model = $1 ORDER BY entry_id, text_hash COLLATE "C"', [model]);
      return r.rows.map(storedOf);
    },
    /**
     * One statement (the prune and the upserts), so it is whole whoever opened the transaction. The
     * entry is locked FOR KEY SHARE: one another node removes meanwhile is waited for and then gets
     * no vectors (0 added), where a plain EXISTS would let the foreign key fail the statement.
     */
    async save(entryId: number, model: string, keep: readonly string[], add: ReadonlyArray<{ hash: string; vector: Float32Array }>, now: number): Promise<number> {
      const r = await db.query(
        `WITH entry AS (SELECT id FROM kb_entries WHERE id = $1 FOR KEY SHARE),
              pruned AS (DELETE FROM kb_vectors WHERE entry_id = $1 AND model = $2 AND NOT (text_hash = ANY($3::text[])))
         INSERT INTO kb_vectors (entry_id, model, text_hash, dims, vector, created_at)
         SELECT entry.id, $2, a.hash, a.dims, a.vector, $7 FROM entry, unnest($4::text[], $5::int[], $6::bytea[]) AS a(hash, dims, vector)
         ON CONFLICT (entry_id, model, text_hash) DO UPDATE SET dims = excluded.dims, vector = excluded.vector, created_at = excluded.created_at`,
        [entryId, model, [...keep, ...add.map((a) => a.hash)], add.map((a) => a.hash), add.map((a) => a.vector.length), add.map((a) => toBytes(a.vector)), now],
      );
      return r.rowCount ?? 0;
    },
    async count(model: string): Promise<number> {
      return int8.parse((await db.query('SELECT count(*) AS n FROM kb_vectors WHERE model = $1', [model])).rows[0].n);
    },
  };
}
