import { MAX_DEPTH } from '../auth/canonical-json.ts';
import { HttpProblem } from './problem.ts';

/**
 * What a request body may hold before it is parsed. JSON.parse and the canonical form cost time by
 * the number of values and the depth, not by the bytes: 4.7 MB of 400,000 keys held the event loop
 * for 1.5 s, 8 MB of `[` for 3.6 s, before the signature could be checked. These bounds are
 * checked on the bytes as they arrive, so such a body is refused after its first chunk.
 */
export interface JsonBounds {
  /** Nesting of the whole body: message_info's own limit plus the envelope's level. */
  maxDepth: number;
  /** Object members and array elements in the whole body (an empty container counts as one). */
  maxItems: number;
  /** Bytes of one member name, as sent (escapes counted as written). */
  maxNameBytes: number;
}

export const DEFAULT_JSON_BOUNDS: JsonBounds = { maxDepth: MAX_DEPTH + 1, maxItems: 10_000, maxNameBytes: 256 };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * A scanner fed the body chunk by chunk. It tracks strings (with their escapes, across chunk
 * boundaries), nesting and items, and throws a 400 problem at the first bound exceeded. It does not
 * check that the body is valid JSON: JSON.parse does that afterwards, on a body known to be cheap.
 * Inside a string it jumps from quote to quote (memchr), so a large attachment costs next to nothing.
 */
export function createJsonScanner(bounds: JsonBounds = DEFAULT_JSON_BOUNDS) {
  // One entry per open container: true for an object. Never longer than maxDepth.
  const open: boolean[] = [];
  let items = 0;
  let inString = false;
  /** The byte at the current position is escaped (a backslash ended the previous chunk). */
  let escaped = false;
  /** The string being read is a member name; its bytes so far. */
  let inName = false;
  let nameBytes = 0;
  /** In an object, after `{` or `,`: the next string is a member name. */
  let expectName = false;

  const refuse = (message: string): never => {
    throw new HttpProblem('validation_failed', `the request body ${message}`, { errors: [{ path: '', message }] });
  };

  function endOfString(chunk: Buffer, from: number): number {
    // Returns the index just past the closing quote, or -1 when the string goes on in the next chunk.
    let i = from;
    if (escaped) {
      escaped = false;
      i++;
    }
    for (;;) {
      if (i >= chunk.length) return -1;
      const q = chunk.indexOf(QUOTE, i);
      const stop = q === -1 ? chunk.length : q;
      let run = 0;
      while (stop - run - 1 >= i && chunk[stop - run - 1] === BACKSLASH) run++;
      if (q === -1) {
        escaped = run % 2 === 1;
        return -1;
      }
      if (run % 2 === 0) return q + 1;
      i = q + 1; // an escaped quote: the string goes on
    }
  }

  function feed(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length) {
      if (inString) {
        const end = endOfString(chunk, i);
        const taken = (end === -1 ? chunk.length : end - 1) - i;
        if (inName && (nameBytes += taken) > bounds.maxNameBytes) refuse(`has a member name longer than ${bounds.maxNameBytes} bytes`);
        if (end === -1) return;
        inString = false;
        i = end;
        continue;
      }
      const byte = chunk[i++]!;
      switch (byte) {
        case QUOTE:
          inString = true;
          inName = expectName;
          nameBytes = 0;
          expectName = false;
          break;
        case 0x7b: // {
        case 0x5b: // [
          if (open.length >= bounds.maxDepth) refuse(`nests deeper than ${bounds.maxDepth} levels (message_info: ${bounds.maxDepth - 1})`);
          open.push(byte === 0x7b);
          expectName = byte === 0x7b;
          if (++items > bounds.maxItems) refuse(`holds more than ${bounds.maxItems} members and elements`);
          break;
        case 0x7d: // }
        case 0x5d: // ]
          open.pop();
          expectName = false;
          break;
        case 0x2c: // ,
          expectName = open.at(-1) === true;
          if (++items > bounds.maxItems) refuse(`holds more than ${bounds.maxItems} members and elements`);
          break;
        default:
          // Whitespace, ':', numbers and literals need nothing here.
          break;
      }
    }
  }

  return { feed };
}
