import { Buffer } from 'node:buffer';
import type { KbCandidate, KnowledgeSource } from './kb-engine.ts';

/**
 * The knowledge base held in memory by the engine thread, answering exactly what the store's FTS5
 * queries answer (same rows, same order) without SQLite's per-query phrase matching and bm25 over
 * every hit, which dominated a match on large knowledge bases (issue 10). It mirrors:
 * - `match`: kb_fts (tokenize = 'trigram', case-folded) MATCH `"t1" OR "t2" …`, ordered by
 *   bm25(kb_fts, 3.0, 1.0) (SQLite's fts5_aux.c formula), ties in id order as SQLite's sorter keeps them;
 * - `containing`: instr(lower(question|answer), term), in id order (SQLite's lower() folds ASCII only).
 * The ranking test (kb-index.test.ts) compares both on generated English and Chinese bases.
 */

interface Row {
  entry: KbCandidate;
  /** Case-folded as the trigram tokenizer folds, one code point per code point (token positions stay). */
  foldQ: string;
  foldA: string;
  /** As SQLite's lower(): ASCII only. */
  lowerQ: string;
  lowerA: string;
  /** Trigram tokens in the row (both columns): bm25's document length. */
  tokens: number;
}

const K1 = 1.2;
const B = 0.75;
const WEIGHTS = [3.0, 1.0] as const;

function fold(text: string): string {
  // Most text is ASCII or caseless (CJK): nothing changes length or position.
  if (/^[\x00-\x7f]*$/.test(text)) return text.toLowerCase();
  if (text.toLowerCase() === text) return text;
  let out = '';
  for (const ch of text) {
    const lower = ch.toLowerCase();
    out += [...lower].length === 1 ? lower : ch;
  }
  return out;
}

const asciiLower = (text: string): string => text.replace(/[A-Z]+/g, (s) => s.toLowerCase());
const codePoints = (text: string): number => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};
const trigramTokens = (text: string): number => Math.max(0, codePoints(text) - 2);

function occurrences(haystack: string, needle: string): number {
  let n = 0;
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1)) n++;
  return n;
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** Calls `each` with every n-code-point window of `text` (substring windows when it has no surrogates). */
function eachGram(text: string, n: number, each: (gram: string) => void): void {
  if (!SURROGATE.test(text)) {
    for (let i = 0; i + n <= text.length; i++) each(text.substring(i, i + n));
    return;
  }
  const chars = [...text];
  for (let i = 0; i + n <= chars.length; i++) each(chars.slice(i, i + n).join(''));
}

function addPosting(index: Map<string, number[]>, key: string, row: number): void {
  const list = index.get(key);
  if (!list) index.set(key, [row]);
  // Rows are added in order, so a row already listed is the last one.
  else if (list[list.length - 1] !== row) list.push(row);
}

/** Splits the `"a" OR "b"` expression the engine builds from quoted terms (kb-engine.ts). */
function phrases(expression: string): string[] {
  return [...expression.matchAll(/"((?:[^"]|"")*)"/g)].map((m) => m[1]!.replace(/""/g, '"'));
}

const NON_ASCII = /[^\x00-\x7f]/;
/** Phrase hits kept (rows summed over phrases, 12 bytes each): customers reuse a small vocabulary. */
const CACHED_HITS = 2_000_000;

export interface KbIndex extends KnowledgeSource {
  readonly size: number;
}

export function buildKbIndex(entries: ReadonlyArray<{ id: number; question: string; answer: string; phrasings?: readonly string[] }>): KbIndex {
  const rows: Row[] = [...entries]
    .sort((a, b) => a.id - b.id)
    .map((e) => {
      const foldQ = fold(e.question);
      const foldA = fold(e.answer);
      return {
        entry: { id: e.id, question: e.question, answer: e.answer, phrasings: e.phrasings ?? [] },
        foldQ,
        foldA,
        lowerQ: asciiLower(e.question),
        lowerA: asciiLower(e.answer),
        tokens: trigramTokens(e.question) + trigramTokens(e.answer),
      };
    });
  // Row positions (ascending, so ascending id) per trigram of the folded text: a phrase's rows are
  // among those of its rarest trigram. Bigrams with a non-ASCII character likewise, for the CJK
  // bigram scans; an ASCII-only `containing` term is rare and scans every row.
  const trigrams = new Map<string, number[]>();
  const bigrams = new Map<string, number[]>();
  let totalTokens = 0;
  rows.forEach((r, i) => {
    const tri = (g: string): void => addPosting(trigrams, g, i);
    eachGram(r.foldQ, 3, tri);
    eachGram(r.foldA, 3, tri);
    const bi = (g: string): void => {
      if (NON_ASCII.test(g)) addPosting(bigrams, g, i);
    };
    if (NON_ASCII.test(r.lowerQ)) eachGram(r.lowerQ, 2, bi);
    if (NON_ASCII.test(r.lowerA)) eachGram(r.lowerA, 2, bi);
    totalTokens += r.tokens;
  });
  const avgdl = rows.length > 0 ? totalTokens / rows.length : 0;
  // bm25's length normalisation per row, computed as fts5Bm25Function computes it (same operations).
  const norm = Float64Array.from(rows, (r) => K1 * (1 - B + (B * r.tokens) / avgdl));
  const scores = new Float64Array(rows.length);
  const seen = new Uint8Array(rows.length);

  /** Rows among which all holding `phrase` are: those of its rarest indexed gram. */
  function rowsWith(phrase: string, index: Map<string, number[]>, n: number, indexed: (gram: string) => boolean): number[] {
    let rarest: number[] | undefined;
    let missing = false;
    let any = false;
    eachGram(phrase, n, (g) => {
      if (!indexed(g)) return;
      any = true;
      const list = index.get(g);
      if (!list) missing = true;
      else if (!rarest || list.length < rarest.length) rarest = list;
    });
    return !any || missing || !rarest ? [] : rarest;
  }

  /** Rows holding `term`, each with its column-weighted instance count (bm25's frequency). */
  const hitCache = new Map<string, { rows: Int32Array; freq: Float64Array }>();
  let cachedHits = 0;
  function hitsOf(term: string): { rows: Int32Array; freq: Float64Array } {
    const cached = hitCache.get(term);
    if (cached) return cached;
    const hitRows: number[] = [];
    const freq: number[] = [];
    for (const i of rowsWith(term, trigrams, 3, () => true)) {
      const r = rows[i]!;
      const q = occurrences(r.foldQ, term);
      const a = occurrences(r.foldA, term);
      if (q + a === 0) continue;
      hitRows.push(i);
      // fts5Bm25Function adds the column weight once per instance; small integers add exactly.
      freq.push(WEIGHTS[0] * q + WEIGHTS[1] * a);
    }
    const hits = { rows: Int32Array.from(hitRows), freq: Float64Array.from(freq) };
    if (cachedHits + hitRows.length > CACHED_HITS) {
      hitCache.clear();
      cachedHits = 0;
    }
    hitCache.set(term, hits);
    cachedHits += hitRows.length;
    return hits;
  }

  return {
    size: rows.length,
    match(expression: string, limit: number): KbCandidate[] {
      const touched: number[] = [];
      // Per row, phrase by phrase in query order as bm25() sums them (a phrase absent adds 0).
      for (const term of phrases(expression).map(fold)) {
        const hits = hitsOf(term);
        const v = Math.log((rows.length - hits.rows.length + 0.5) / (hits.rows.length + 0.5));
        const idf = v <= 0 ? 1e-6 : v;
        for (let k = 0; k < hits.rows.length; k++) {
          const i = hits.rows[k]!;
          const f = hits.freq[k]!;
          if (!seen[i]) {
            seen[i] = 1;
            scores[i] = 0;
            touched.push(i);
          }
          scores[i]! += idf * ((f * (K1 + 1.0)) / (f + norm[i]!));
        }
      }
      // The best `limit` by bm25, ties in id order, as SQLite's sorter returns them.
      const best: number[] = [];
      const better = (a: number, b: number): boolean => scores[a]! > scores[b]! || (scores[a] === scores[b] && a < b);
      for (const i of touched) {
        seen[i] = 0;
        if (best.length === limit && !better(i, best[best.length - 1]!)) continue;
        let at = best.length;
        while (at > 0 && better(i, best[at - 1]!)) at--;
        best.splice(at, 0, i);
        if (best.length > limit) best.pop();
      }
      return best.map((i) => rows[i]!.entry);
    },
    containing(term: string, limit: number): KbCandidate[] {
      const t = term.toLowerCase();
      const out: KbCandidate[] = [];
      if (limit <= 0) return out;
      const indexed = codePoints(t) >= 2 && NON_ASCII.test(t);
      const candidates = indexed ? rowsWith(t, bigrams, 2, (g) => NON_ASCII.test(g)) : rows.keys();
      for (const i of candidates) {
        const r = rows[i]!;
        if (r.lowerQ.includes(t) || r.lowerA.includes(t)) out.push(r.entry);
        if (out.length >= limit) break;
      }
      return out;
    },
  };
}

/**
 * A knowledge source that rebuilds its index when the knowledge base changed (a point read of
 * the store's version before each query), so an edit from the console or the CLI counts at once.
 */
export function createIndexedKnowledge(store: {
  all(): Array<{ id: number; question: string; answer: string; phrasings: string[] }>;
  version(): Uint8Array;
}): KnowledgeSource & { refresh(): void } {
  let version: Buffer | null = null;
  let index: KbIndex = buildKbIndex([]);
  const current = (): KbIndex => {
    const v = store.version();
    if (!version?.equals(v)) {
      // Copied: the version is read before the entries, so a change in between rebuilds again.
      version = Buffer.from(v);
      index = buildKbIndex(store.all());
    }
    return index;
  };
  return {
    /** Builds the index now (at start-up) rather than in the first question's time. */
    refresh: () => void current(),
    match: (expression, limit) => current().match(expression, limit),
    containing: (term, limit) => current().containing(term, limit),
  };
}
