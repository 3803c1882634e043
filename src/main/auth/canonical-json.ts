import canonicalize from 'canonicalize';

/** Deeper than this is no chat message; refusing it keeps the recursive canonicalizer safe. */
export const MAX_DEPTH = 32;

export function jsonDepth(value: unknown, limit = MAX_DEPTH): number {
  // Iterative, so a hostile body cannot exhaust the stack while being measured.
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > deepest) deepest = d;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return deepest;
}

/**
 * RFC 8785 (JCS) text of a parsed JSON value. Uses the library by the RFC's author: key order by
 * UTF-16 code units and ECMAScript number formatting are exactly what the RFC prescribes.
 * Throws on values JCS cannot represent (lone surrogates).
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('value has no JSON representation');
  return text;
}
