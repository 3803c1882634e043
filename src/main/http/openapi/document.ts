import { EVENT_TYPES } from '../../../shared/protocol/message-schema.ts';
import { CHAT_PATH } from '../server.ts';
import { ATTEMPT_TIMEOUT_MS, RETRY_AFTER_MAX_MS, RETRY_SCHEDULE_MS } from '../../delivery/retry-policy.ts';
import { codesByStatus, headerComponents, problemExamples, problemResponseName, problemResponses, schemaComponents } from './components.ts';
import { DELIVERY_EXAMPLES, EXAMPLE, REQUEST_EXAMPLES, signedBody } from './examples.ts';

/** The protocol version this document describes (shared/protocol.md, docs/protocol.md). */
export const PROTOCOL_VERSION = '1.1';

type Json = Record<string, unknown>;
const ref = (kind: string, name: string): Json => ({ $ref: `#/components/${kind}/${name}` });

const DESCRIPTION = [
  'One signed endpoint takes chat messages from an integrator and hands them to a conversational engine; replies to `auto_dialog` ' +
    'messages are delivered to the integrator\'s `send_url` (see `webhooks`). The complete reference is `docs/protocol.md`; this ' +
    'document is generated from the server\'s own schemas by `npm run openapi`.',
  '**Signing.** `signature` = lowercase hex HMAC-SHA256 with the client secret (as UTF-8) as key, over ' +
    '`timestamp + "." + client + "." + JCS(message_info)` (JCS: RFC 8785 canonical JSON of `message_info` as sent). ' +
    `Every example here is signed for real, for client \`${EXAMPLE.client}\` with the example secret \`${EXAMPLE.secret}\` ` +
    `at timestamp ${EXAMPLE.timestamp}: your code should produce the same signatures.`,
  '**Order of checks** (the first failure is the answer): JSON with the four top-level fields; the client exists (401) and is enabled (403); ' +
    'the timestamp is within 300 s (401); the signature matches an active secret (401); the same signed request was not accepted in the ' +
    'last 600 s (409); the client\'s rate limit (429); then message_info and the scenario rules (400/413).',
  '**Idempotency.** msg_id is unique per (client, event_type): resending an accepted message with the same message_info (re-signed ' +
    'or not) answers the first response again with `Idempotent-Replayed: true`; different content is 409 `msg_id_conflict`.',
  '**Errors** are RFC 9457 problems (`application/problem+json`) with a stable `code`; components.responses lists every one, ' +
    'including 404 `not_found` (any other path) and 405 `method_not_allowed` (another method on a path here).',
].join('\n\n');

function chatOperation(): Json {
  const responses: Json = {
    '200': {
      description:
        'Accepted. Every success is 200 (never 202), with at least request_id, event_type, conversation_id and msg_id; the rest depends on event_type.',
      headers: { 'X-Request-Id': ref('headers', 'X-Request-Id'), 'Idempotent-Replayed': ref('headers', 'Idempotent-Replayed') },
      content: {
        'application/json': {
          schema: ref('schemas', 'ChatMessageResponse'),
          examples: {
            ...Object.fromEntries(
              Object.entries(REQUEST_EXAMPLES).map(([name, e]) => [name, { summary: e.summary, value: e.response }]),
            ),
            duplicate: {
              summary: 'A resend of m-1001 with the same message_info',
              description: 'The first response again, byte for byte, with `Idempotent-Replayed: true`; nothing is processed again.',
              value: REQUEST_EXAMPLES['auto_dialog_text']!.response,
            },
          },
        },
      },
    },
  };
  for (const status of codesByStatus().keys()) {
    if (status !== 404 && status !== 405) responses[String(status)] = ref('responses', problemResponseName(status));
  }
  return {
    operationId: 'postChatMessage',
    summary: 'Send a chat message',
    description:
      `Scenarios by \`message_info.event_type\`: ${EVENT_TYPES.map((t) => `\`${t}\``).join(', ')}. Other methods on this path: 405 ` +
      '`method_not_allowed` with `Allow: POST`. Bodies over 10 MiB and other media types are refused with `Connection: close`.',
    parameters: [
      {
        name: 'X-Request-Id',
        in: 'header',
        required: false,
        description:
          'Your id for this request, echoed in the `X-Request-Id` header and `request_id`; otherwise the server makes one. A value that does ' +
          'not match the pattern is not refused: it is silently replaced by a fresh id (prefix `req_`).',
        schema: { type: 'string', pattern: '^[A-Za-z0-9._:@\\-]{1,128}$' },
      },
    ],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: ref('schemas', 'ChatMessageRequest'),
          examples: Object.fromEntries(
            Object.entries(REQUEST_EXAMPLES).map(([name, e]) => [
              name,
              { summary: e.summary, ...(e.description ? { description: e.description } : {}), value: signedBody(e.info) },
            ]),
          ),
        },
      },
    },
    responses,
  };
}

function plainGet(summary: string, ok: Json): Json {
  return { get: { summary, responses: { '200': ok, '405': ref('responses', problemResponseName(405)) } } };
}

/** Readiness: 200, or 503 while a PostgreSQL node cannot reach its database. */
function readyGet(): Json {
  const ok = {
    description: 'The server can take chat messages now (on PostgreSQL: its database answered within 2 s, checked at most once a second).',
    content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ready' } }, required: ['status'] }, example: { status: 'ready' } } },
  };
  const get = plainGet('Readiness', ok) as { get: { responses: Record<string, Json> } };
  get.get.responses['503'] = ref('responses', problemResponseName(503));
  return get;
}

const minutes = (ms: number): string => (ms < 60_000 ? `${ms / 1000} s` : ms < 3_600_000 ? `${ms / 60_000} min` : `${ms / 3_600_000} h`);

function deliveryWebhook(): Json {
  const retried = (description: string, retryAfter = true): Json => ({
    description,
    ...(retryAfter ? { headers: { 'Retry-After': { description: `Seconds or an HTTP date; honoured up to ${minutes(RETRY_AFTER_MAX_MS)}.`, schema: { type: 'string' } } } } : {}),
  });
  return {
    post: {
      operationId: 'deliverReply',
      summary: 'A reply delivered to your send_url',
      description:
        'Each auto reply, and each reply an operator writes in the console, is a POST to the message\'s send_url (operator replies: the ' +
        'send_url of the conversation\'s latest auto_dialog message, else the client\'s default; web conversations: the default). ' +
        'The body is signed exactly like your requests, anew at each attempt with a fresh timestamp: verify it with your signing code, ' +
        'and answer 5xx (not 4xx) when you cannot verify it for a reason that may pass (clock skew, a secret not yet updated after rotation). ' +
        `Success is any 2xx within ${ATTEMPT_TIMEOUT_MS / 1000} s. A time-out or connection error is retried like a 5xx. ` +
        `Retry schedule after the first try: ${RETRY_SCHEDULE_MS.map(minutes).join(', ')}, each ±20 % jitter; then the delivery is dead ` +
        'and the operator can retry it. Deliveries of one conversation go in order. At least once: deduplicate on `Idempotency-Key`.',
      parameters: [
        { name: 'Idempotency-Key', in: 'header', required: true, description: 'The reply\'s msg_id: the same on every attempt.', schema: { type: 'string' } },
        { name: 'User-Agent', in: 'header', required: false, schema: { type: 'string', const: 'Switchboard/1' } },
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: ref('schemas', 'Delivery'),
            examples: Object.fromEntries(
              Object.entries(DELIVERY_EXAMPLES).map(([name, e]) => [
                name,
                { summary: e.summary, ...(e.description ? { description: e.description } : {}), value: signedBody(e.info, { timestamp: e.timestamp }) },
              ]),
            ),
          },
        },
      },
      responses: {
        '2XX': { description: 'Delivered. The body is ignored.' },
        '3XX': retried('Not followed: retried on the schedule.', false),
        '408': retried('Retried on the schedule.'),
        '429': retried('Retried; a Retry-After replaces the scheduled wait.'),
        '4XX': { description: 'Any other 4xx is final: the delivery is dead at once (the operator can retry it from the console or CLI).' },
        '5XX': retried('Retried; a Retry-After replaces the scheduled wait.'),
      },
    },
  };
}

const sorted = <T>(o: Record<string, T>): Record<string, T> => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

export function buildOpenApiDocument(): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Switchboard chat messages',
      version: PROTOCOL_VERSION,
      summary: 'The signed chat-message endpoint and the reply deliveries of Switchboard, protocol v' + PROTOCOL_VERSION,
      description: DESCRIPTION,
    },
    servers: [
      {
        url: 'http://127.0.0.1:{port}',
        description: 'A local Switchboard (`npm run serve`); it binds 127.0.0.1 unless told otherwise.',
        variables: { port: { default: '8787', description: 'The port given with `--port` (default 8787).' } },
      },
    ],
    paths: {
      [CHAT_PATH]: { post: chatOperation() },
      '/healthz': plainGet('Liveness', {
        description: 'The server is up.',
        content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ok' } }, required: ['status'] }, example: { status: 'ok' } } },
      }),
      '/readyz': readyGet(),
      '/metrics': plainGet('Prometheus metrics', {
        description: 'Prometheus text format.',
        content: { 'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' } } },
      }),
    },
    webhooks: { replyDelivery: deliveryWebhook() },
    components: {
      schemas: sorted(schemaComponents()),
      responses: sorted(problemResponses()),
      examples: sorted(problemExamples()),
      headers: sorted(headerComponents()),
    },
  };
}

/** The document as committed in docs/openapi.json: two-space JSON and a trailing newline. */
export function renderOpenApi(): string {
  return `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
}
