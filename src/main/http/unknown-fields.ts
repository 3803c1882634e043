import { fileInfoSchema, LIMITS, messageInfoSchema, quoteSchema } from '../../shared/protocol/message-schema.ts';
import type { FieldError } from '../../shared/problem-codes.ts';

const KNOWN = new Set(Object.keys(messageInfoSchema.shape));
const KNOWN_IN_QUOTE = new Set(Object.keys(quoteSchema.shape));
const KNOWN_IN_FILE = new Set(Object.keys(fileInfoSchema.shape));

/** Characters JSON.stringify escapes in a string: only such a string needs serializing to be measured. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** UTF-8 bytes of `value` as compact JSON; a plain string is measured without copying it. */
function jsonBytes(value: unknown): number {
  if (typeof value === 'string' && !NEEDS_ESCAPE.test(value)) return Buffer.byteLength(value, 'utf8') + 2;
  return Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8');
}

/** A key as a path segment: `.name` when it reads as one, else a quoted, shortened `["…"]`. */
function segment(key: string): string {
  if (/^[A-Za-z_$][\w$]{0,63}$/.test(key)) return `.${key}`;
  return `[${JSON.stringify(key.length > 64 ? `${key.slice(0, 64)}…` : key)}]`;
}

interface Unknown {
  path: string;
  bytes: number;
}

function unknownsOf(obj: Record<string, unknown>, known: ReadonlySet<string>, path: string, out: Unknown[]): void {
  for (const key of Object.keys(obj)) {
    // A field counts as it is written: its quoted name, the colon and its value.
    if (!known.has(key)) out.push({ path: path + segment(key), bytes: jsonBytes(key) + 1 + jsonBytes(obj[key]) });
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The most fields `errors` names: the largest, which are the ones to move out. */
const NAMED_MAX = 20;

export interface UnknownFieldsOverLimit {
  bytes: number;
  errors: FieldError[];
}

/**
 * Section 2's cap on unknown fields, after the schema passed: those of message_info, of its quote
 * and of each files_info item, counted together (LIMITS.unknownFieldsMaxBytes). Only unknown
 * fields are measured, so a message with large known fields (a data: URL file) costs nothing
 * extra. Null when within the limit; else the total and, largest first, the fields whose removal
 * brings it under (at most NAMED_MAX).
 */
export function unknownFieldsOverLimit(info: Record<string, unknown>): UnknownFieldsOverLimit | null {
  const max = LIMITS.unknownFieldsMaxBytes;
  const found: Unknown[] = [];
  unknownsOf(info, KNOWN, 'message_info', found);
  if (isObject(info['quote'])) unknownsOf(info['quote'], KNOWN_IN_QUOTE, 'message_info.quote', found);
  const files = info['files_info'];
  if (Array.isArray(files)) files.forEach((f, i) => isObject(f) && unknownsOf(f, KNOWN_IN_FILE, `message_info.files_info[${i}]`, found));
  const bytes = found.reduce((sum, u) => sum + u.bytes, 0);
  if (bytes <= max) return null;
  const errors: FieldError[] = [];
  let left = bytes;
  for (const u of found.sort((a, b) => b.bytes - a.bytes)) {
    if (left <= max || errors.length === NAMED_MAX) break;
    errors.push({ path: u.path, message: `is an unknown field of ${u.bytes} bytes as JSON; unknown fields may hold ${max} bytes together` });
    left -= u.bytes;
  }
  return { bytes, errors };
}

/** The problem's detail: the limit and the size found, what to do instead, and how many other problems `errors` lists. */
export function unknownFieldsDetail(over: UnknownFieldsOverLimit, others: number): string {
  const more = others === 0 ? '' : `; ${others} other problem${others === 1 ? '' : 's'} in errors`;
  return (
    `message_info's unknown fields hold ${over.bytes} bytes of JSON together; the limit is ${LIMITS.unknownFieldsMaxBytes} bytes: ` +
    `keep large data out of the message and send a reference to it (an id or a URL) instead${more}`
  );
}
