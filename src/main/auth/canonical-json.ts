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

/** `plain`: the value was parsed from JSON text that had no backslash at all. */
function text(s: string, plain: boolean): string {
  // Without a backslash in the JSON text no string can hold a character JSON.stringify escapes
  // (a quote, a control character, a lone surrogate: valid UTF-8 has none): its JCS form is itself
  // in quotes, and the 14 ms per 4.6 MB that JSON.stringify spends looking is saved.
  if (plain) return `"${s}"`;
  // Native check: the `canonicalize` package's own loop over every character took 50 ms on a
  // 4.6 MB base64 attachment, on the event loop, before the signature was known to be good.
  if (!s.isWellFormed()) throw new Error('a lone surrogate cannot be canonicalized');
  return JSON.stringify(s);
}

function write(value: unknown, out: string[], plain: boolean): void {
  switch (typeof value) {
    case 'string':
      out.push(text(value, plain));
      return;
    case 'number':
      // JSON.parse turns 1e400 into Infinity, which has no JSON form.
      if (!Number.isFinite(value)) throw new Error(`${value} cannot be canonicalized`);
      out.push(JSON.stringify(value)); // ECMAScript number formatting, as RFC 8785 3.2.2.3 prescribes
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'object':
      if (value === null) out.push('null');
      else if (Array.isArray(value)) {
        out.push('[');
        value.forEach((item, i) => {
          if (i > 0) out.push(',');
          write(item, out, plain);
        });
        out.push(']');
      } else {
        out.push('{');
        // Default sort order is by UTF-16 code units, RFC 8785 3.2.3's order.
        Object.keys(value)
          .sort()
          .forEach((key, i) => {
            if (i > 0) out.push(',');
            out.push(text(key, plain), ':');
            write((value as Record<string, unknown>)[key], out, plain);
          });
        out.push('}');
      }
      return;
    default:
      throw new Error(`a ${typeof value} has no JSON representation`);
  }
}

/**
 * RFC 8785 (JCS) text of a value parsed by JSON.parse (objects, arrays, strings, finite numbers,
 * booleans, null). Throws on what JCS cannot represent (lone surrogates, non-finite numbers).
 * Callers bound the depth first (jsonDepth, or the body scan before parsing): this recurses.
 * `from`: the JSON text `value` was parsed from, when the caller has it (see `text`).
 */
export function canonicalJson(value: unknown, from?: { source: Buffer }): string {
  const out: string[] = [];
  write(value, out, from !== undefined && from.source.indexOf(0x5c) === -1);
  return out.join('');
}

/**
 * canonicalJson for a large message_info, its members written in turns of the event loop: between
 * members, once `budgetMs` have passed, it awaits `pause()`. One body combining 5 MB of escaped
 * newlines with 20,000 long member names took 100 ms to canonicalise in one piece, before its
 * signature could be checked. A single member is still written whole (the body's bounds keep that
 * to some 30 ms).
 */
export async function canonicalJsonInTurns(value: Record<string, unknown>, from: { source: Buffer }, pause: () => Promise<void>, budgetMs = 15): Promise<string> {
  const out: string[] = ['{'];
  const plain = from.source.indexOf(0x5c) === -1;
  let since = performance.now();
  const keys = Object.keys(value).sort();
  for (let i = 0; i < keys.length; i++) {
    if (performance.now() - since > budgetMs) {
      await pause();
      since = performance.now();
    }
    const key = keys[i]!;
    out.push(i > 0 ? ',' : '', text(key, plain), ':');
    write(value[key], out, plain);
  }
  out.push('}');
  return out.join('');
}
