/** The compose box's @-mention completion (the console's side of mentionsIn). */
import { MENTION_CHARS } from './console-team.ts';

/** A mention's id so far, and what may not come right before its `@` (as the service reads them: mentionsIn). */
const ID_SO_FAR = new RegExp(`^${MENTION_CHARS}*$`, 'u');
const WORD_BEFORE = new RegExp(`${MENTION_CHARS.slice(0, -1)}@]`, 'u');

/**
 * The `@word` being typed at the caret, if any: where its `@` is and what follows it so far. Null
 * when the caret is not right after a mention in progress (the word has a space, or `@` is inside
 * a word such as an e-mail address).
 */
export function mentionAt(text: string, caret: number): { start: number; query: string } | null {
  const head = text.slice(0, caret);
  const at = head.lastIndexOf('@');
  if (at < 0) return null;
  const query = head.slice(at + 1);
  if (!ID_SO_FAR.test(query) || query.length > 64) return null;
  if (at > 0 && WORD_BEFORE.test(head[at - 1]!)) return null;
  return { start: at, query };
}

/** The text with the mention in progress replaced by `@id ` and where the caret goes after it. */
export function completeMention(text: string, caret: number, start: number, id: string): { value: string; caret: number } {
  const inserted = `@${id} `;
  return { value: text.slice(0, start) + inserted + text.slice(caret).replace(/^\s/u, ''), caret: start + inserted.length };
}

/** Team members a query matches: id or name starting with it first, then containing it (case folded). */
export function matchMembers<M extends { id: string; name: string }>(members: readonly M[], query: string): M[] {
  const q = query.toLowerCase();
  const starts = members.filter((m) => m.id.toLowerCase().startsWith(q) || m.name.toLowerCase().startsWith(q));
  const contains = members.filter((m) => !starts.includes(m) && (m.id.toLowerCase().includes(q) || m.name.toLowerCase().includes(q)));
  return [...starts, ...contains].slice(0, 8);
}
