import { messageInfoSchema } from '../../../shared/protocol/message-schema.ts';
import { checkScenarioRules, issuesDetail } from '../../../shared/protocol/scenario-rules.ts';
import type { ProblemCode } from '../../../shared/problem-codes.ts';
import { clientErrorProblem } from '../client-error.ts';
import { fieldErrors, parseEnvelope } from '../envelope.ts';
import { HttpProblem } from '../problem.ts';
import { CHAT_PATH } from '../server.ts';
import { EXAMPLE, exampleId, signedBody, signingStringSha256, type Info, type SignedBody } from './examples.ts';

/**
 * One example per problem code: what causes it, what to do, and the body the server answers.
 * Where the server's checks are pure functions they build the example (so its `errors` are the
 * server's own words); the rest mirror the handler's text. Each `trigger` is the request that
 * makes a server set up as in EXAMPLE answer exactly this: test/openapi.test.ts sends them.
 */

export interface Trigger {
  method?: string;
  path?: string;
  /** Replaces the default `content-type: application/json`. */
  headers?: Record<string, string>;
  body?: () => string;
  /** Sent once first and accepted: the example is the answer to the second send. */
  twice?: boolean;
}

export interface ProblemExample {
  summary: string;
  /** The cause and what to do about it. */
  description: string;
  problem: HttpProblem;
  trigger?: Trigger;
}

const T = EXAMPLE.timestamp;
const LIMIT = 10 * 1024 * 1024;
const FILE_LIMIT = 5 * 1024 * 1024;
const json = (body: unknown) => () => JSON.stringify(body);

function envelopeProblem(text: string): HttpProblem {
  try {
    parseEnvelope(Buffer.from(text, 'utf8'));
  } catch (error) {
    if (error instanceof HttpProblem) return error;
    throw error;
  }
  throw new Error(`example body passes the envelope check: ${text}`);
}

/** The schema's and the scenario rules' answer, as the handler words it, for client acme (no default send_url). */
function messageInfoProblem(info: Info): HttpProblem {
  const parsed = messageInfoSchema.safeParse(info);
  if (!parsed.success) return new HttpProblem('validation_failed', 'message_info failed validation', { errors: fieldErrors('message_info', parsed.error) });
  const issues = checkScenarioRules(parsed.data, { hasDefaultSendUrl: false, allowedOrigins: [] });
  const first = issues[0];
  if (!first) throw new Error(`example message_info is valid: ${JSON.stringify(info)}`);
  return new HttpProblem(first.code, issuesDetail(issues), { errors: issues.map(({ path, message }) => ({ path, message })) });
}

function parserProblem(code: string, reason: string): HttpProblem {
  const problem = clientErrorProblem(Object.assign(new Error(reason), { code, reason }));
  if (!problem) throw new Error(`${code} gets no answer`);
  return problem;
}

const auto = (extra: Info): Info => ({ event_type: 'auto_dialog', msg_id: 'm-1008', from_user_id: 'cust-42', from_user_type: 2, content: 'Hello', send_url: EXAMPLE.sendUrl, ...extra });
const signedTrigger = (info: Info, o?: Parameters<typeof signedBody>[1]): Trigger => ({ body: () => JSON.stringify(signedBody(info, o)) });
function scenario(info: Info): { problem: HttpProblem; trigger: Trigger } {
  return { problem: messageInfoProblem(info), trigger: signedTrigger(info) };
}

const badSignature: SignedBody = { ...signedBody(auto({})), signature: signedBody(auto({}), { secret: 'an-old-secret-rotated-away-0123456789abcdef' }).signature };
const invalidJson = '{"client":"acme","timestamp":1763715600,}';
const unknownField = JSON.stringify({ ...signedBody(auto({})), priority: 'high' });
const validation = auto({ from_user_type: '2', create_timestamp: T * 1000 });
/** Plain base64 that decodes to one byte more than the limit. */
const bigFile = 'A'.repeat(4 * Math.ceil((FILE_LIMIT + 1) / 3));
const { content: _text, ...withoutText } = auto({});
const fileInfo: Info = { ...withoutText, files_info: [{ content: bigFile, file_type: 'video', file_name: 'demo.mp4' }] };
const msMs = T * 1000;

export const PROBLEM_EXAMPLES: Record<ProblemCode, ProblemExample> = {
  bad_request: {
    summary: 'Malformed HTTP',
    description: 'The request is not valid HTTP/1.1 (here a Content-Length that is not a number). The connection is closed. Fix the client or proxy.',
    problem: parserProblem('HPE_INVALID_CONTENT_LENGTH', 'Invalid character in Content-Length'),
  },
  invalid_json: {
    summary: 'The body is not JSON',
    description: 'The body is not valid JSON, or not UTF-8. Send the JSON text, encoded as UTF-8.',
    problem: envelopeProblem(invalidJson),
    trigger: { body: () => invalidJson },
  },
  validation_failed: {
    summary: 'Fields missing or of the wrong type',
    description: 'A field is missing, of the wrong type (types are strict: "2" is not 2) or over a limit. `errors` lists every problem; fix them all and send again.',
    ...scenario(validation),
  },
  unknown_field: {
    summary: 'A top-level field other than the four',
    description: 'Only client, signature, timestamp and message_info are allowed at the top level: anything else would not be signed. Move it into message_info.',
    problem: envelopeProblem(unknownField),
    trigger: { body: () => unknownField },
  },
  field_not_allowed: {
    summary: 'send_url or at_list outside auto_dialog',
    description: 'send_url and at_list belong to auto_dialog only. Remove them.',
    ...scenario({ event_type: 'website_dialog', msg_id: 'w-2003', from_user_id: 'visitor-9', content: 'Hello', send_url: EXAMPLE.sendUrl }),
  },
  missing_sender: {
    summary: 'No sender',
    description: 'from_user_id and group_id are both empty. Set the sender\'s id (or the group\'s).',
    ...scenario(auto({ from_user_id: '' })),
  },
  mixed_payload: {
    summary: 'auto_dialog with text and files',
    description: 'An auto_dialog message carries text alone or files alone (all of one file_type). Send them as separate messages.',
    ...scenario(auto({ files_info: [{ content: 'https://files.example.com/uploads/receipt-8841.png', file_type: 'image' }] })),
  },
  unknown_command: {
    summary: 'A cmd_dialog command the server does not know',
    description: 'The message lists the supported commands.',
    ...scenario({ event_type: 'cmd_dialog', msg_id: 'cmd-3002', from_user_id: 'cust-42', content: 'pause_auto_reply' }),
  },
  send_url_not_allowed: {
    summary: 'A forbidden send_url',
    description: 'send_url is a link-local or cloud metadata address (refused in every spelling), or outside the client\'s allowlist of origins.',
    ...scenario(auto({ send_url: 'http://169.254.169.254/latest/meta-data/' })),
  },
  unknown_client: {
    summary: 'No such client',
    description: 'The client id is not registered. Check the id, or ask the operator to add it (`npm run cli -- clients add ID`).',
    problem: new HttpProblem('unknown_client', 'no client "globex" is registered'),
    trigger: signedTrigger(auto({}), { client: 'globex' }),
  },
  timestamp_out_of_range: {
    summary: 'The timestamp is too far from server time',
    description: 'More than 300 s from the server\'s clock (`server_time`); a value above 10^11 is called out as milliseconds. Sign with the current Unix time in seconds and keep your clock in sync.',
    problem: new HttpProblem(
      'timestamp_out_of_range',
      `timestamp ${msMs} is more than 300 s from server time ${T}: it looks like milliseconds; timestamp is Unix seconds (divide by 1000)`,
      { extra: { server_time: T } },
    ),
    trigger: signedTrigger(auto({}), { timestamp: msMs }),
  },
  invalid_signature: {
    summary: 'The signature matches no active secret',
    description:
      'Compare `signing_string_sha256` with the SHA-256 of your own signing string: different means your canonical message_info ' +
      '(RFC 8785), timestamp or client differs from the server\'s; equal means the secret differs (rotated?).',
    problem: new HttpProblem(
      'invalid_signature',
      'signature does not match any active secret: expected lowercase hex HMAC-SHA256 of timestamp + "." + client + "." + JCS(message_info)',
      { extra: { signing_string_sha256: signingStringSha256(badSignature) } },
    ),
    trigger: { body: json(badSignature) },
  },
  client_disabled: {
    summary: 'The client is disabled',
    description: 'The operator disabled this client (`npm run cli -- clients enable ID` enables it).',
    problem: new HttpProblem('client_disabled', `client "${EXAMPLE.disabledClient}" is disabled`),
    trigger: signedTrigger(auto({}), { client: EXAMPLE.disabledClient }),
  },
  not_found: {
    summary: 'Unknown path',
    description: 'Any path other than /custom-im/chat-messages, /healthz, /readyz and /metrics.',
    problem: new HttpProblem('not_found', 'no such path: /custom-im/chat-message'),
    trigger: { path: '/custom-im/chat-message', body: json(signedBody(auto({}))) },
  },
  method_not_allowed: {
    summary: 'Another method than POST',
    description: 'The endpoint takes POST only (`Allow: POST`); /healthz, /readyz and /metrics take GET and HEAD.',
    problem: new HttpProblem('method_not_allowed', `GET is not allowed on ${CHAT_PATH}; use POST`, { headers: { allow: 'POST' } }),
    trigger: { method: 'GET' },
  },
  request_timeout: {
    summary: 'The request took too long to arrive',
    description: 'The headers did not arrive within 30 s, or the whole request within 60 s. The connection is closed.',
    problem: parserProblem('ERR_HTTP_REQUEST_TIMEOUT', 'Request timeout'),
  },
  replayed_request: {
    summary: 'The same signed request again',
    description: 'This exact signed request (same client and signature) was accepted in the last 600 s and has no msg_id to be an idempotent retry. Sign each new request anew; give messages a msg_id to retry safely.',
    problem: new HttpProblem('replayed_request', 'this exact signed request was already accepted; sign each new request anew'),
    trigger: { ...signedTrigger({ event_type: 'auto_dialog', from_user_id: 'cust-88', from_user_type: 2, content: 'Hello?', send_url: EXAMPLE.sendUrl }), twice: true },
  },
  msg_id_conflict: {
    summary: 'A msg_id reused with different content',
    description: 'msg_id is unique per (client, event_type): resending it with the same message_info returns the first response, with different content it is refused. Use a new msg_id for a new message.',
    problem: new HttpProblem('msg_id_conflict', 'msg_id "m-1001" was already used for a different auto_dialog message'),
    trigger: signedTrigger({ event_type: 'auto_dialog', msg_id: 'm-1001', from_user_id: 'cust-42', from_user_type: 2, content: 'Something else', send_url: EXAMPLE.sendUrl }),
  },
  payload_too_large: {
    summary: 'The body is over the limit',
    description: `The body is over ${LIMIT} bytes (a server setting). It is refused as soon as that is known, with \`Connection: close\`; the rest is read and discarded so your client still gets this answer.`,
    problem: new HttpProblem('payload_too_large', `body exceeds the limit of ${LIMIT} bytes`, { extra: { limit_bytes: LIMIT } }),
    trigger: { body: () => JSON.stringify(signedBody(auto({ content: 'x'.repeat(LIMIT) }))) },
  },
  file_too_large: {
    summary: 'A file over 5 MiB',
    description: `A files_info item decodes to more than ${FILE_LIMIT} bytes. Send a URL to the file instead.`,
    problem: messageInfoProblem(fileInfo),
    trigger: signedTrigger(fileInfo),
  },
  unsupported_media_type: {
    summary: 'Not application/json',
    description: 'Send `Content-Type: application/json` (`; charset=utf-8` is fine).',
    problem: new HttpProblem('unsupported_media_type', 'Content-Type must be application/json (charset=utf-8 optional)'),
    trigger: { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: () => 'client=acme' },
  },
  rate_limited: {
    summary: 'Too many requests',
    description: 'Over the client\'s rate (default 100 requests/s, burst 200), or too many failed authentications from one address. Wait `Retry-After` seconds; the request was not processed, so send it again unchanged.',
    problem: new HttpProblem('rate_limited', `client "${EXAMPLE.client}" exceeds its request rate`, { headers: { 'retry-after': '1' }, extra: { retry_after: 1 } }),
  },
  headers_too_large: {
    summary: 'Request line and headers too large',
    description: 'The request line and headers exceed the server\'s limit (16 KiB by default). The connection is closed.',
    problem: parserProblem('HPE_HEADER_OVERFLOW', 'Header overflow'),
  },
  internal_error: {
    summary: 'A bug on the server\'s side',
    description: 'Logged with this request_id, never with a stack trace in the answer. Bad input never causes it. Retrying with the same msg_id is safe.',
    problem: new HttpProblem('internal_error', 'the server failed to process this request; it has been logged'),
  },
  service_unavailable: {
    summary: 'The database was busy',
    description: 'Another process held the database write lock too long. Nothing was stored: retry after `Retry-After` seconds.',
    problem: new HttpProblem('service_unavailable', 'the database is busy; nothing was stored, retry shortly', { headers: { 'retry-after': '1' } }),
  },
  engine_timeout: {
    summary: 'assist_dialog: the engine did not answer in time',
    description: 'assist_dialog only (website_dialog answers a time-out with a handoff instead, auto_dialog with no reply). Nothing was stored: retry.',
    problem: new HttpProblem('engine_timeout', 'engine kb timed out: no answer within 30000 ms'),
  },
};

/** The request_id each example carries: the X-Request-Id its trigger is sent with. */
export function problemRequestId(code: ProblemCode): string {
  return exampleId('req_', `problem ${code}`);
}
