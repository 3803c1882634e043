import type { z } from 'zod';
import { HttpProblem } from './problem.ts';
import { jsonDepth, MAX_DEPTH } from '../auth/canonical-json.ts';
import type { FieldError } from '../../shared/problem-codes.ts';

/** The four signed top-level fields, type-checked but not yet authenticated. */
export interface Envelope {
  client: string;
  signature: string;
  timestamp: number;
  messageInfo: Record<string, unknown>;
}

const TOP_LEVEL = ['client', 'signature', 'timestamp', 'message_info'] as const;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Section 3's first row: JSON, exactly the four top-level fields, each of the right type. */
export function parseEnvelope(body: Buffer): Envelope {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new HttpProblem('invalid_json', 'body is not valid UTF-8');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new HttpProblem('invalid_json', `body is not valid JSON: ${(error as Error).message}`);
  }
  if (!isPlainObject(parsed)) {
    throw new HttpProblem('validation_failed', 'body must be a JSON object', { errors: [{ path: '', message: 'must be an object' }] });
  }
  const errors: FieldError[] = [];
  const unknown = Object.keys(parsed).filter((k) => !(TOP_LEVEL as readonly string[]).includes(k));
  const { client, signature, timestamp, message_info: info } = parsed;
  if (typeof client !== 'string' || client.length === 0 || client.length > 128) {
    errors.push({ path: 'client', message: 'is required: a string of 1..128 characters' });
  }
  if (typeof signature !== 'string' || signature.length === 0) errors.push({ path: 'signature', message: 'is required: a hex string' });
  if (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp)) {
    errors.push({ path: 'timestamp', message: 'is required: an integer of Unix seconds' });
  }
  if (!isPlainObject(info)) errors.push({ path: 'message_info', message: 'is required: an object' });
  else if (jsonDepth(info) > MAX_DEPTH) errors.push({ path: 'message_info', message: `is nested deeper than ${MAX_DEPTH} levels` });
  const unknownErrors = unknown.map((k) => ({ path: k, message: 'is not a field of the protocol (it would not be signed)' }));
  if (errors.length > 0) {
    throw new HttpProblem('validation_failed', 'the request body is missing required fields or has wrong types', {
      errors: [...errors, ...unknownErrors],
    });
  }
  if (unknownErrors.length > 0) {
    throw new HttpProblem('unknown_field', `unknown top-level field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`, {
      errors: unknownErrors,
    });
  }
  return { client: client as string, signature: signature as string, timestamp: timestamp as number, messageInfo: info as Record<string, unknown> };
}

/** zod issues as the protocol's `errors[]`: `message_info.files_info[0].content`. */
export function fieldErrors(prefix: string, error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => {
    let path = prefix;
    for (const part of issue.path) path += typeof part === 'number' ? `[${part}]` : `.${String(part)}`;
    return { path, message: issue.message };
  });
}
