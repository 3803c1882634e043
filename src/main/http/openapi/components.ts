import { z } from 'zod';
import { EVENT_TYPES, type EventType } from '../../../shared/protocol/message-schema.ts';
import { PROBLEM_CODES, type ProblemCode } from '../../../shared/problem-codes.ts';
import { chatRequestSchema, messageInfoUnion, messageInfoVariants } from './request-schemas.ts';
import { deliveryBodySchema, deliverySchemas, PROBLEM_CODE_LIST, problemSchema, successSchemas } from './response-schemas.ts';
import { PROBLEM_EXAMPLES, problemRequestId } from './problem-examples.ts';

type Json = Record<string, unknown>;

const ref = (kind: string, name: string): Json => ({ $ref: `#/components/${kind}/${name}` });
const pascal = (s: string): string => s.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());

export const variantName = (t: EventType): string => `MessageInfo${pascal(t)}`;
export const responseName = (t: EventType): string => `${pascal(t)}Response`;

/** zod's JSON Schema of every registered schema, with references between them as OpenAPI components. */
function convert(entries: Array<[string, z.ZodType]>, io: 'input' | 'output'): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of entries) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { io, target: 'draft-2020-12', uri: (id) => `#/components/schemas/${id}` });
  const out: Record<string, Json> = {};
  for (const [id, schema] of Object.entries(schemas as Record<string, Json>)) {
    if (id === '__shared') throw new Error('a schema is shared between components without an id: give it one');
    // Components live inside the document: no dialect or id of their own.
    const { $schema: _s, $id: _i, ...rest } = schema;
    out[id] = rest;
  }
  return out;
}

function discriminator(names: (t: EventType) => string): Json {
  return { propertyName: 'event_type', mapping: Object.fromEntries(EVENT_TYPES.map((t) => [t, `#/components/schemas/${names(t)}`])) };
}

const successUnion = z.discriminatedUnion(
  'event_type',
  EVENT_TYPES.map((t) => successSchemas[t]) as unknown as [z.ZodObject, ...z.ZodObject[]],
);

export function schemaComponents(): Record<string, Json> {
  const requests = convert(
    [
      ['ChatMessageRequest', chatRequestSchema],
      ['MessageInfo', messageInfoUnion],
      ...EVENT_TYPES.map((t): [string, z.ZodType] => [variantName(t), messageInfoVariants[t]]),
    ],
    'input',
  );
  const responses = convert(
    [
      ['ChatMessageResponse', successUnion],
      ...EVENT_TYPES.map((t): [string, z.ZodType] => [responseName(t), successSchemas[t]]),
      ['Problem', problemSchema],
      ['Delivery', deliveryBodySchema],
      ['AutoReply', deliverySchemas.auto_reply],
      ['OperatorReply', deliverySchemas.operator_reply],
    ],
    'output',
  );
  requests['MessageInfo'] = { ...requests['MessageInfo'], discriminator: discriminator(variantName) };
  responses['ChatMessageResponse'] = { ...responses['ChatMessageResponse'], discriminator: discriminator(responseName) };
  return { ...requests, ...responses };
}

/** Statuses in ascending order, each with its codes in PROBLEM_CODES order. */
export function codesByStatus(): Map<number, ProblemCode[]> {
  const map = new Map<number, ProblemCode[]>();
  for (const code of PROBLEM_CODE_LIST) {
    const { status } = PROBLEM_CODES[code];
    map.set(status, [...(map.get(status) ?? []), code]);
  }
  return new Map([...map.entries()].sort(([a], [b]) => a - b));
}

export const problemResponseName = (status: number): string => `Problem${status}`;
export const problemExampleName = (code: ProblemCode): string => `problem_${code}`;

/** Headers some problems carry, by the header name the server sends. */
const PROBLEM_HEADERS: Record<string, string> = { 'retry-after': 'Retry-After', allow: 'Allow' };

export function problemExamples(): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const code of PROBLEM_CODE_LIST) {
    const e = PROBLEM_EXAMPLES[code];
    const headers = Object.entries(e.problem.headers).map(([k, v]) => `\`${PROBLEM_HEADERS[k] ?? k}: ${v}\``);
    out[problemExampleName(code)] = {
      summary: `${code}: ${e.summary}`,
      description: e.description + (headers.length > 0 ? ` Sent with ${headers.join(', ')}.` : ''),
      value: e.problem.body(problemRequestId(code)),
    };
  }
  return out;
}

export function problemResponses(): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [status, codes] of codesByStatus()) {
    const headerNames = [...new Set(codes.flatMap((c) => Object.keys(PROBLEM_EXAMPLES[c].problem.headers)))].map((k) => PROBLEM_HEADERS[k] ?? k);
    out[problemResponseName(status)] = {
      description: codes.map((c) => `\`${c}\`: ${PROBLEM_CODES[c].title}.`).join(' '),
      headers: Object.fromEntries([['X-Request-Id', ref('headers', 'X-Request-Id')], ...headerNames.map((h) => [h, ref('headers', h)])]),
      content: {
        'application/problem+json': {
          schema: { allOf: [ref('schemas', 'Problem')], properties: { status: { const: status }, code: { enum: codes } } },
          examples: Object.fromEntries(codes.map((c) => [c, ref('examples', problemExampleName(c))])),
        },
      },
    };
  }
  return out;
}

export function headerComponents(): Record<string, Json> {
  return {
    'X-Request-Id': {
      description: 'The request\'s id, also `request_id` in the body: yours if you sent a safe `X-Request-Id`, else a fresh one (an unsafe one is silently replaced).',
      schema: { type: 'string' },
    },
    'Idempotent-Replayed': {
      description: 'Present on a resend of an accepted msg_id with the same message_info: this is the first response again, and nothing was processed again.',
      schema: { type: 'string', const: 'true' },
    },
    'Retry-After': { description: 'Seconds to wait before sending again.', schema: { type: 'integer', minimum: 1 } },
    Allow: { description: 'The methods the path takes.', schema: { type: 'string' } },
  };
}
