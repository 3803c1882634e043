import { Buffer } from 'node:buffer';
import type { Clock } from '../../../shared/clock.ts';
import type { KbCandidate } from '../kb-engine.ts';
import type { StoredVector } from '../../store/kb-vectors.ts';
import type { EmbeddingsClient } from './embeddings-client.ts';
import { textHash } from './vector-math.ts';

/** One entry's vectors to persist: those whose hash is in `keep` or `add` stay, the rest go. */
export interface KbVectorsWrite {
  entryId: number;
  model: string;
  keep: string[];
  add: Array<{ hash: string; vector: Float32Array }>;
}

/** What the vector set reads and writes; the engine thread's connection is read-only, so `save` hands writes on. */
export interface VectorAccess {
  entries(): Array<{ id: number; question: string; answer: string; phrasings: readonly string[] }>;
  /** The knowledge base's version (kb.version()): entries are re-read when it changes. */
  version(): Uint8Array;
  stored(model: string): StoredVector[];
  save(write: KbVectorsWrite): void;
}

export interface EntryVectorsDeps {
  clock: Clock;
  log: (line: string) => void;
  /** Texts per embeddings request while refreshing. */
  batchSize?: number;
  /** After a failed refresh, the next is tried no sooner than this. */
  retryAfterMs?: number;
}

/** What ranking reads: each entry with the vectors of its current texts (entries without any are absent). */
export interface VectorSnapshot {
  rows: ReadonlyArray<{ entry: KbCandidate; vectors: readonly Float32Array[] }>;
  dims: number | null;
  /** Entries still missing a vector for some text. */
  pending: number;
  total: number;
}

interface Tracked {
  entry: KbCandidate;
  texts: Array<{ text: string; hash: string }>;
}

/**
 * The knowledge base's vectors under one embedding model, held in memory by the thread that ranks.
 * Loaded once from the store; after that, entries whose texts have no vector (new, edited, a
 * phrasing added) are embedded in the background, in batches, one refresh at a time, and handed
 * to `save`. A customer's question never waits for it: until an entry has vectors it is ranked
 * by its words only.
 */
export function createEntryVectors(model: string, access: VectorAccess, deps: EntryVectorsDeps) {
  const batchSize = deps.batchSize ?? 32;
  const retryAfterMs = deps.retryAfterMs ?? 60_000;
  let client: EmbeddingsClient | null = null;
  let version: Buffer | null = null;
  let tracked = new Map<number, Tracked>();
  /** In memory: loaded and computed, by entry and text hash. */
  let vectors: Map<number, Map<string, Float32Array>> | null = null;
  /** What the store holds (to prune texts an entry no longer has). */
  const persisted = new Map<number, Set<string>>();
  let dims: number | null = null;
  let refreshing: Promise<void> | null = null;
  let failedAt: number | null = null;
  let lastFailure: string | null = null;
  const stop = new AbortController();

  function load(): Map<number, Map<string, Float32Array>> {
    const out = new Map<number, Map<string, Float32Array>>();
    for (const s of access.stored(model)) {
      if (dims === null) dims = s.vector.length;
      if (s.vector.length !== dims) continue;
      if (!out.has(s.entryId)) out.set(s.entryId, new Map());
      out.get(s.entryId)!.set(s.textHash, s.vector);
      if (!persisted.has(s.entryId)) persisted.set(s.entryId, new Set());
      persisted.get(s.entryId)!.add(s.textHash);
    }
    return out;
  }

  /** Re-reads the entries when the knowledge base changed; vectors of texts gone are dropped. */
  function sync(): Map<number, Map<string, Float32Array>> {
    vectors ??= load();
    const v = access.version();
    if (version?.equals(v)) return vectors;
    version = Buffer.from(v);
    tracked = new Map();
    for (const e of access.entries()) {
      const texts = [e.question, ...e.phrasings].map((text) => ({ text, hash: textHash(text) }));
      tracked.set(e.id, { entry: { id: e.id, question: e.question, answer: e.answer, phrasings: [...e.phrasings] }, texts });
    }
    for (const [id, byHash] of vectors) {
      const t = tracked.get(id);
      if (!t) {
        vectors.delete(id);
        persisted.delete(id);
        continue;
      }
      const current = new Set(t.texts.map((x) => x.hash));
      for (const h of byHash.keys()) if (!current.has(h)) byHash.delete(h);
    }
    return vectors;
  }

  const missing = (t: Tracked, have: Map<string, Float32Array> | undefined): Array<{ text: string; hash: string }> => t.texts.filter((x) => !have?.has(x.hash));
  const stale = (t: Tracked): boolean => [...(persisted.get(t.entry.id) ?? [])].some((h) => !t.texts.some((x) => x.hash === h));

  function write(id: number, add: Array<{ hash: string; vector: Float32Array }>): void {
    const t = tracked.get(id);
    if (!t) return;
    const have = vectors!.get(id) ?? new Map<string, Float32Array>();
    const keep = t.texts.map((x) => x.hash).filter((h) => have.has(h) && !add.some((a) => a.hash === h));
    access.save({ entryId: id, model, keep, add });
    persisted.set(id, new Set([...keep, ...add.map((a) => a.hash)]));
  }

  async function refresh(): Promise<void> {
    for (;;) {
      const mem = sync();
      const work: Array<{ id: number; text: string; hash: string }> = [];
      const pruneOnly: number[] = [];
      for (const [id, t] of tracked) {
        const need = missing(t, mem.get(id));
        if (need.length === 0 && stale(t)) pruneOnly.push(id);
        for (const x of need) if (work.length < batchSize) work.push({ id, ...x });
      }
      for (const id of pruneOnly) write(id, []);
      if (work.length === 0 || !client) return;
      const got = await client.embed(work.map((w) => w.text), stop.signal);
      if (dims !== null && got[0]!.length !== dims) {
        // The model behind the name changed (another server, another size): start over with it.
        deps.log(`embedding model ${model} now gives ${got[0]!.length} dimensions, not ${dims}: its knowledge-base vectors are computed again`);
        mem.clear();
      }
      dims = got[0]!.length;
      const byEntry = new Map<number, Array<{ hash: string; vector: Float32Array }>>();
      work.forEach((w, i) => {
        if (!byEntry.has(w.id)) byEntry.set(w.id, []);
        byEntry.get(w.id)!.push({ hash: w.hash, vector: got[i]! });
      });
      // Entries edited while the batch was out are checked again by the next turn's sync.
      for (const [id, add] of byEntry) {
        if (!tracked.has(id)) continue;
        write(id, add);
        if (!mem.has(id)) mem.set(id, new Map());
        for (const a of add) mem.get(id)!.set(a.hash, a.vector);
      }
    }
  }

  function kick(): void {
    if (refreshing || !client || stop.signal.aborted) return;
    if (failedAt !== null && deps.clock.now() - failedAt < retryAfterMs) return;
    refreshing = refresh()
      .then(
        () => {
          failedAt = null;
          lastFailure = null;
        },
        (error: unknown) => {
          if (stop.signal.aborted) return;
          failedAt = deps.clock.now();
          const message = (error as Error).message;
          if (message !== lastFailure) deps.log(`knowledge-base vectors (${model}) not refreshed: ${message}; retried in ${Math.round(retryAfterMs / 1000)} s, answers match by words meanwhile`);
          lastFailure = message;
        },
      )
      .finally(() => (refreshing = null));
  }

  return {
    model,
    /** The client that computes vectors (the latest saved engine's key and URL). */
    useClient(c: EmbeddingsClient): void {
      client = c;
      kick();
    },
    /** The vectors of current texts; starts a refresh when some are missing. */
    snapshot(): VectorSnapshot {
      const mem = sync();
      const rows: Array<{ entry: KbCandidate; vectors: Float32Array[] }> = [];
      let pending = 0;
      for (const [id, t] of tracked) {
        const have = mem.get(id);
        if (missing(t, have).length > 0 || stale(t)) pending++;
        const vs = t.texts.flatMap((x) => (have?.has(x.hash) ? [have.get(x.hash)!] : []));
        if (vs.length > 0) rows.push({ entry: t.entry, vectors: vs });
      }
      if (pending > 0) kick();
      return { rows, dims, pending, total: tracked.size };
    },
    /** A question's vector has `n` dimensions: stored ones of another size are of another model and are recomputed. */
    acceptDims(n: number): void {
      if (dims === n) return;
      dims = n;
      vectors?.clear();
      kick();
    },
    /** Resolves when no refresh is running (tests, the bench). */
    async idle(): Promise<void> {
      while (refreshing) await refreshing;
    },
    /** Why the last refresh failed, if it did. */
    failure: (): string | null => lastFailure,
    close(): void {
      stop.abort();
    },
  };
}

export type EntryVectors = ReturnType<typeof createEntryVectors>;
