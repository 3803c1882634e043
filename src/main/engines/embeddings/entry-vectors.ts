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
  /** At once on SQLite; a promise across the network (PostgreSQL), which ranking waits for once. */
  stored(model: string): StoredVector[] | Promise<StoredVector[]>;
  /** A promise when the save is a transaction of its own (PostgreSQL): the refresh waits, and a failed save fails it. */
  save(write: KbVectorsWrite): void | Promise<void>;
  /**
   * Other nodes compute and save vectors of the same entries (PostgreSQL): before a batch is
   * embedded, what they stored of its entries is read and taken, so a text is embedded again only
   * when two nodes had it in flight at the same moment. Absent where this thread is the only one.
   */
  storedFor?(model: string, entryIds: readonly number[]): Promise<StoredVector[]>;
}

export interface EntryVectorsDeps {
  clock: Clock;
  log: (line: string) => void;
  /** Texts per embeddings request while refreshing. */
  batchSize?: number;
  /** After a failed refresh, the next is tried no sooner than this. */
  retryAfterMs?: number;
  /** With `storedFor` (several nodes): where in the entries this node starts, 0..1 (default random), so nodes refreshing at once work on different batches. */
  startAt?: number;
  /** Where later batches start (default Math.random). */
  random?: () => number;
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
  const random = deps.random ?? Math.random;
  const startAt = deps.startAt ?? random();
  let turns = 0;
  let client: EmbeddingsClient | null = null;
  let version: Buffer | null = null;
  let tracked = new Map<number, Tracked>();
  /** In memory: loaded and computed, by entry and text hash. */
  const vectors = new Map<number, Map<string, Float32Array>>();
  /** The stored vectors are in `vectors` (or failed to load: then a refresh tries again). */
  let loaded = false;
  let loading: Promise<void> | null = null;
  /** What the store holds (to prune texts an entry no longer has). */
  const persisted = new Map<number, Set<string>>();
  let dims: number | null = null;
  let refreshing: Promise<void> | null = null;
  let failedAt: number | null = null;
  let lastFailure: string | null = null;
  const stop = new AbortController();

  function adopt(list: readonly StoredVector[]): void {
    for (const s of list) {
      if (dims === null) dims = s.vector.length;
      if (s.vector.length !== dims) continue;
      if (!vectors.has(s.entryId)) vectors.set(s.entryId, new Map());
      vectors.get(s.entryId)!.set(s.textHash, s.vector);
      if (!persisted.has(s.entryId)) persisted.set(s.entryId, new Set());
      persisted.get(s.entryId)!.add(s.textHash);
    }
  }

  /** Loads the stored vectors once: at once when the store answers synchronously, else in the background. */
  function load(): Promise<void> | null {
    if (loaded) return null;
    if (loading) return loading;
    const got = access.stored(model);
    if (Array.isArray(got)) {
      adopt(got);
      loaded = true;
      return null;
    }
    loading = (got as Promise<StoredVector[]>)
      .then((list) => {
        adopt(list);
        loaded = true;
        // Taken in after the entries may have been synced: drop what is not current again.
        version = null;
      })
      .finally(() => (loading = null));
    return loading;
  }

  /** Vectors of entries gone or texts no longer theirs leave memory (and `persisted`, for entries gone). */
  function dropGone(): void {
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
  }

  /** Re-reads the entries when the knowledge base changed; vectors of texts gone are dropped. */
  function sync(): Map<number, Map<string, Float32Array>> {
    void load()?.catch(() => {});
    const v = access.version();
    if (version?.equals(v)) return vectors;
    version = Buffer.from(v);
    tracked = new Map();
    for (const e of access.entries()) {
      const texts = [e.question, ...e.phrasings].map((text) => ({ text, hash: textHash(text) }));
      tracked.set(e.id, { entry: { id: e.id, question: e.question, answer: e.answer, phrasings: [...e.phrasings] }, texts });
    }
    if (loaded) dropGone();
    return vectors;
  }

  const missing = (t: Tracked, have: Map<string, Float32Array> | undefined): Array<{ text: string; hash: string }> => t.texts.filter((x) => !have?.has(x.hash));
  const stale = (t: Tracked): boolean => [...(persisted.get(t.entry.id) ?? [])].some((h) => !t.texts.some((x) => x.hash === h));

  async function write(id: number, add: Array<{ hash: string; vector: Float32Array }>): Promise<void> {
    const t = tracked.get(id);
    if (!t) return;
    const have = vectors.get(id) ?? new Map<string, Float32Array>();
    const keep = t.texts.map((x) => x.hash).filter((h) => have.has(h) && !add.some((a) => a.hash === h));
    await access.save({ entryId: id, model, keep, add });
    persisted.set(id, new Set([...keep, ...add.map((a) => a.hash)]));
  }

  /**
   * The tracked entries, from a point of this node's on. Every batch starts at a point drawn
   * anew: a node that took a fixed turn would, once behind another, keep taking the batch the
   * other has in flight (measured, 320 texts, two nodes at once: 578 embedded; drawn anew, 361-389).
   */
  function inTurn(): Array<[number, Tracked]> {
    const all = [...tracked];
    if (!access.storedFor || all.length === 0) return all;
    const at = turns++ === 0 ? startAt : random();
    const from = Math.floor(at * all.length) % all.length;
    return [...all.slice(from), ...all.slice(0, from)];
  }

  async function refresh(): Promise<void> {
    await load();
    for (;;) {
      const mem = sync();
      let work: Array<{ id: number; text: string; hash: string }> = [];
      const pruneOnly: number[] = [];
      for (const [id, t] of inTurn()) {
        const need = missing(t, mem.get(id));
        if (need.length === 0 && stale(t)) pruneOnly.push(id);
        for (const x of need) if (work.length < batchSize) work.push({ id, ...x });
      }
      for (const id of pruneOnly) await write(id, []);
      if (work.length === 0 || !client) return;
      if (access.storedFor) {
        // Another node may have stored them since this one loaded: taken, not computed again.
        adopt(await access.storedFor(model, [...new Set(work.map((w) => w.id))]));
        dropGone();
        work = work.filter((w) => !mem.get(w.id)?.has(w.hash));
        if (work.length === 0) continue;
      }
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
        await write(id, add);
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
      vectors.clear();
      kick();
    },
    /** Resolves once the stored vectors were read (at once on SQLite; one query on PostgreSQL, or its failure). */
    async loaded(): Promise<void> {
      await load()?.catch(() => {});
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
