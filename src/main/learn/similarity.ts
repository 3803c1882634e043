/**
 * Text likeness for learning from the team: whether an operator's answer is a knowledge-base
 * entry's (pasted, or slightly edited), and whether two customers asked the same thing.
 *
 * A token-set overlap (Jaccard), not the engine's rankKnowledge: that ranks entries against one
 * query with weights tuned for retrieval (and is being rewritten), while these are symmetric
 * comparisons of two short texts that must not move when the engine's scoring does. Latin text
 * splits into words; Han text, which has no spaces, into overlapping character pairs (bigrams),
 * which compare Chinese sentences well without a segmenter.
 */

// Words that say nothing about what was asked; left out of question comparisons only (an answer's
// every word counts: "do" and "do not" differ).
const STOP = new Set('a an the is are am was be to of in on at for and or i me my you your we our it this that do does did can could would will how what when where why which hi hello please thanks thank'.split(' '));
// The same for Chinese, cut out of the text before it is paired (it has no spaces to split on).
const HAN_STOP = /请问|你好|您好|怎么|怎样|如何|为什么|什么|可以|能不能|一下|我的|我们|吗|呢|的|了|吧|啊|呀|我|你|您|要|能/gu;

/** Lower case, width and compatibility forms folded (ＡＢＣ = ABC), placeholders ([name]...) dropped. */
export function normalise(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\[(?:name|email|phone|number|url)\]/g, ' ');
}

/** The words of the text (Latin) and its Han character pairs; `questions` drops filler words. */
export function tokens(raw: string, questions = false): Set<string> {
  const out = new Set<string>();
  const text = questions ? normalise(raw).replace(HAN_STOP, ' ') : normalise(raw);
  for (const run of text.match(/\p{Script=Han}+|(?:(?!\p{Script=Han})[\p{L}\p{N}])+/gu) ?? []) {
    if (/\p{Script=Han}/u.test(run)) {
      const chars = [...run];
      if (chars.length === 1) out.add(chars[0]!);
      for (let i = 0; i + 1 < chars.length; i++) out.add(chars[i]! + chars[i + 1]!);
    } else if (!(questions && STOP.has(run))) out.add(run);
  }
  return out;
}

/** |A ∩ B| / |A ∪ B|: 1 for the same set, 0 for nothing shared (or two empty texts). */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const t of a) if (b.has(t)) shared++;
  return shared / (a.size + b.size - shared);
}

/** An operator answer this close to an entry's answer is that answer (pasted, greeted, lightly edited). */
export const SAME_ANSWER = 0.6;
/** Two questions this close are the same question asked again (grouped in the Learn view). */
export const SAME_QUESTION = 0.5;

export const answerLikeness = (a: string, b: string): number => jaccard(tokens(a), tokens(b));
export const questionLikeness = (a: string, b: string): number => jaccard(tokens(a, true), tokens(b, true));
