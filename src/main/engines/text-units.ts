/**
 * Splits text into matching units: lower-cased Latin words (plural "s" folded) and, for CJK
 * text, which has no spaces, overlapping character bigrams, the usual unit of Chinese retrieval.
 */

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const TOKEN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+|[\p{L}\p{N}]+/gu;

const STOP_WORDS = new Set(
  (
    'a an and are as at be but by can could do does for from how i if in is it me my of on or our please the this ' +
    'to was we what when where which who why will with would you your hi hello thanks thank there their they'
  ).split(' '),
);
const STOP_CHARS = new Set([...'的了吗呢吧啊呀我你您他她它们是在有和与请问么怎什这那个就都也还要能会可以吗嘛哦']);

export interface Unit {
  unit: string;
  /** Function words and single CJK characters carry little meaning; they count, but weakly. */
  weight: number;
}

const STOP_WEIGHT = 0.2;
const CJK_CHAR_WEIGHT = 0.5;

function fold(word: string): string {
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

export function textUnits(text: string): Unit[] {
  const units: Unit[] = [];
  for (const [token] of text.normalize('NFKC').toLowerCase().matchAll(TOKEN)) {
    if (CJK.test(token[0]!)) {
      // Characters catch paraphrases that share few bigrams (退款要多久 / 退款需要多长时间).
      const chars = [...token];
      for (const c of chars) units.push({ unit: c, weight: CJK_CHAR_WEIGHT * (STOP_CHARS.has(c) ? STOP_WEIGHT : 1) });
      for (let i = 0; i + 1 < chars.length; i++) {
        const a = chars[i]!;
        const b = chars[i + 1]!;
        units.push({ unit: a + b, weight: STOP_CHARS.has(a) && STOP_CHARS.has(b) ? STOP_WEIGHT : 1 });
      }
    } else {
      const word = fold(token);
      units.push({ unit: word, weight: STOP_WORDS.has(token) || STOP_WORDS.has(word) ? STOP_WEIGHT : 1 });
    }
  }
  return units;
}

/**
 * Terms for an FTS5 trigram query: whole Latin words and CJK trigrams (3+ characters, the
 * tokenizer's minimum). CJK bigrams come separately: the trigram index cannot find them, so
 * they are scanned for when the indexed terms found too little (paraphrases share bigrams more
 * often than trigrams).
 */
export function searchTerms(text: string): { indexed: string[]; bigrams: string[] } {
  const indexed = new Set<string>();
  const bigrams = new Set<string>();
  for (const [token] of text.normalize('NFKC').toLowerCase().matchAll(TOKEN)) {
    const chars = [...token];
    if (CJK.test(chars[0]!)) {
      for (let i = 0; i + 2 < chars.length; i++) indexed.add(chars.slice(i, i + 3).join(''));
      for (let i = 0; i + 1 < chars.length; i++) {
        if (!(STOP_CHARS.has(chars[i]!) || STOP_CHARS.has(chars[i + 1]!))) bigrams.add(chars[i]! + chars[i + 1]!);
      }
    } else if (chars.length >= 3 && !STOP_WORDS.has(token)) {
      indexed.add(fold(token));
    }
  }
  return { indexed: [...indexed], bigrams: [...bigrams] };
}
