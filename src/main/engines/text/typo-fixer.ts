import { SYNONYM_GROUPS } from './synonyms.ts';
import { textUnits } from './text-units.ts';

/**
 * "pasword" for "password", "delivey" for "delivery": a Latin word the knowledge base does not
 * know is read as the one known word (or synonym) it is one edit away from (an insertion, a
 * deletion, a substitution or two letters swapped), found through an index of single deletions
 * (the symmetric-delete idea). Only words of five letters or more: shorter ones have too many
 * neighbours to guess from.
 */
export interface TypoFixer {
  /** The known unit `unit` was likely meant as; undefined when there is none, or several. */
  fix(unit: string): string | undefined;
}

const MIN_LENGTH = 5;
const LATIN = /^[a-z]+$/;

function deletions(word: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < word.length; i++) out.push(word.slice(0, i) + word.slice(i + 1));
  return out;
}

/** Damerau–Levenshtein distance of at most one (with adjacent swaps). */
function withinOne(a: string, b: string): boolean {
  if (a === b) return true;
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length) {
    if (a.slice(i + 1) === b.slice(i + 1)) return true;
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2);
  }
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

let synonymWords: Array<[string, string]> | null = null;
/** Single-word synonyms as the words customers type, each with its group's unit. */
function synonymVocabulary(): Array<[string, string]> {
  synonymWords ??= SYNONYM_GROUPS.flatMap((g) => g.filter((w) => LATIN.test(w) && w.length >= MIN_LENGTH).map((w): [string, string] => [w, textUnits(w)[0]?.unit ?? w]));
  return synonymWords;
}

export function createTypoFixer(known: Iterable<string>): TypoFixer {
  const byDeletion = new Map<string, Set<string>>();
  const unitOf = new Map<string, string>();
  const add = (word: string, unit: string): void => {
    unitOf.set(word, unit);
    for (const key of [word, ...deletions(word)]) {
      const set = byDeletion.get(key);
      if (set) set.add(word);
      else byDeletion.set(key, new Set([word]));
    }
  };
  for (const u of known) if (LATIN.test(u) && u.length >= MIN_LENGTH - 1) add(u, u);
  for (const [word, unit] of synonymVocabulary()) if (!unitOf.has(word)) add(word, unit);
  const cache = new Map<string, string | undefined>();
  return {
    fix(unit) {
      if (!LATIN.test(unit) || unit.length < MIN_LENGTH) return undefined;
      if (cache.has(unit)) return cache.get(unit);
      const found = new Set<string>();
      for (const key of [unit, ...deletions(unit)]) {
        for (const word of byDeletion.get(key) ?? []) if (withinOne(unit, word)) found.add(unitOf.get(word)!);
      }
      const fixed = found.size === 1 ? [...found][0] : undefined;
      if (cache.size > 10_000) cache.clear();
      cache.set(unit, fixed);
      return fixed;
    },
  };
}
