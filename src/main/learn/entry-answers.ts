import type { StoreContract } from '../store/contract.ts';

type KbWords = Pick<StoreContract['kb'], 'all' | 'version'>;
import { jaccard, SAME_ANSWER, tokens } from './similarity.ts';

export interface AnsweredEntry {
  id: number;
  question: string;
  phrasings: string[];
  score: number;
}

interface Words {
  version: string;
  entries: Array<{ id: number; question: string; phrasings: string[]; words: ReadonlySet<string> }>;
}

// One per knowledge base (the service has one store; tests make many): each entry's answer words,
// made again only when the knowledge base's version moves. Reading every entry and splitting every
// answer on each operator reply cost ~12 ms at 2,000 entries on the main thread's event loop.
const cache = new WeakMap<KbWords, Words>();

const versionKey = (v: Uint8Array): string => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');

async function wordsOf(kb: KbWords): Promise<Words['entries']> {
  const version = versionKey(await kb.version());
  const held = cache.get(kb);
  if (held && held.version === version) return held.entries;
  const entries = (await kb.all()).map((e) => ({ id: e.id, question: e.question, phrasings: e.phrasings, words: tokens(e.answer) }));
  cache.set(kb, { version, entries });
  return entries;
}

/**
 * The entry whose answer this is (pasted, greeted, lightly edited: at least SAME_ANSWER alike),
 * the closest when several are; null when none is.
 */
export async function entryWithAnswer(kb: KbWords, answer: string): Promise<AnsweredEntry | null> {
  const words = tokens(answer);
  let best: AnsweredEntry | null = null;
  for (const e of await wordsOf(kb)) {
    const score = jaccard(words, e.words);
    if (score >= SAME_ANSWER && (!best || score > best.score)) best = { id: e.id, question: e.question, phrasings: e.phrasings, score };
  }
  return best;
}
