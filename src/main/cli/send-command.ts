import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { canonicalJson } from '../auth/canonical-json.ts';
import { hmacKey, sign, signingString } from '../auth/signature.ts';
import { ConfigError, defaultDataDir, loadServerConfig } from '../config/server-config.ts';
import { EVENT_TYPES, LIMITS } from '../../shared/protocol/message-schema.ts';
import { parseCommandFlags, UsageError } from './args.ts';
import { DEFAULT_WAIT_SECONDS, NAME_MAX, SEND_USAGE } from './send-usage.ts';
import { NotListeningError, postWhenListening } from './post-when-listening.ts';
import { secretFrom, type SecretIo } from './secret-input.ts';

// protocol-doc.test.ts checks docs/protocol.md's section 10 against send's help from here.
export { SEND_USAGE };

const OPTIONS = {
  client: { type: 'string' },
  secret: { type: 'string' },
  'secret-env': { type: 'string' },
  'secret-stdin': { type: 'boolean' },
  endpoint: { type: 'string' },
  event: { type: 'string' },
  from: { type: 'string' },
  'from-type': { type: 'string' },
  to: { type: 'string' },
  group: { type: 'string' },
  at: { type: 'string' },
  nickname: { type: 'string' },
  'to-nickname': { type: 'string' },
  'group-name': { type: 'string' },
  wait: { type: 'string' },
  content: { type: 'string' },
  'msg-id': { type: 'string' },
  'send-url': { type: 'string' },
  file: { type: 'string' },
  timestamp: { type: 'string' },
  'dry-run': { type: 'boolean' },
  'data-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type SendFlags = ReturnType<typeof parseCommandFlags<typeof OPTIONS>>;

const PATH = '/custom-im/chat-messages';
/** The response headers an integrator acts on; the rest is transport detail. */
const SHOWN_HEADERS = ['content-type', 'x-request-id', 'idempotent-replayed', 'retry-after', 'allow'];
const ANSWER_TIMEOUT_MS = 60_000;

export interface SendIo extends SecretIo {
  out: (line: string) => void;
  err: (line: string) => void;
  nowMs: () => number;
}

function id(flag: string, value: string): string {
  if (value.length < 1 || value.length > LIMITS.idMax) throw new UsageError(`--${flag} must be 1..${LIMITS.idMax} characters, got ${value.length}`);
  return value;
}

function displayName(flag: string, value: string): string {
  // Counted as the server's zod schema counts (UTF-16 units), so what passes here passes there.
  if (value.trim() === '' || value.length > NAME_MAX) throw new UsageError(`--${flag} must be 1..${NAME_MAX} characters and not blank, got ${value.length}`);
  return value;
}

function httpUrl(flag: string, value: string): URL {
  const url = URL.canParse(value) ? new URL(value) : null;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new UsageError(`--${flag} must be an absolute http(s) URL, got "${value}"`);
  return url;
}

/** The message_info of a file: a JSON object, or a whole request body whose message_info is taken. */
function readInfoFile(path: string): Record<string, unknown> {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UsageError(`--file ${path}: ${(error as NodeJS.ErrnoException).code ? 'cannot read it' : 'not valid JSON'}: ${(error as Error).message}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new UsageError(`--file ${path} must hold a JSON object: the message_info`);
  const body = data as Record<string, unknown>;
  const inner = body['message_info'];
  if ('client' in body && inner !== null && typeof inner === 'object' && !Array.isArray(inner)) return inner as Record<string, unknown>;
  return body;
}

/**
 * message_info from the flags over --file. Without a file the flags must make a valid message for
 * the event (a sender, content), and the tool fills msg_id and auto_dialog's from_user_type; a
 * file is sent as it is, so an integrator can also see what the server says about a bad one.
 */
export function buildMessageInfo(flags: SendFlags, newMsgId: () => string = () => `cli_${randomBytes(12).toString('base64url')}`): Record<string, unknown> {
  const file = flags.file === undefined ? undefined : readInfoFile(flags.file);
  const info: Record<string, unknown> = {};
  const event = flags.event ?? file?.['event_type'];
  if (event === undefined) throw new UsageError(`--event is required: one of ${EVENT_TYPES.join(', ')}`);
  if (flags.event !== undefined && !(EVENT_TYPES as readonly string[]).includes(flags.event)) {
    throw new UsageError(`--event must be one of ${EVENT_TYPES.join(', ')}, got "${flags.event}"`);
  }
  info['event_type'] = event;
  const isAuto = event === 'auto_dialog';
  if (flags['msg-id'] !== undefined) info['msg_id'] = id('msg-id', flags['msg-id']);
  else if (!file) info['msg_id'] = newMsgId();
  if (flags.from !== undefined) info['from_user_id'] = flags.from;
  if (flags['from-type'] !== undefined) {
    if (!/^[1-4]$/.test(flags['from-type'])) throw new UsageError(`--from-type must be 1, 2, 3 or 4 (2 is a customer), got "${flags['from-type']}"`);
    info['from_user_type'] = Number(flags['from-type']);
  } else if (!file && isAuto) {
    info['from_user_type'] = 2;
  }
  if (flags.to !== undefined) info['to_user_id'] = id('to', flags.to);
  if (flags.group !== undefined) info['group_id'] = flags.group;
  if (flags.nickname !== undefined) info['from_user_nickname'] = displayName('nickname', flags.nickname);
  if (flags['to-nickname'] !== undefined) info['to_user_nickname'] = displayName('to-nickname', flags['to-nickname']);
  if (flags['group-name'] !== undefined) info['group_name'] = displayName('group-name', flags['group-name']);
  if (flags.at !== undefined) {
    if (!isAuto) throw new UsageError('--at is allowed only with --event auto_dialog');
    const ids = flags.at.split(',').map((s) => s.trim()).filter(Boolean);
    if (ids.length === 0) throw new UsageError(`--at must be comma-separated user ids, got "${flags.at}"`);
    info['at_list'] = ids;
  }
  if (flags.content !== undefined) info['content'] = flags.content;
  if (flags['send-url'] !== undefined) {
    if (!isAuto) throw new UsageError('--send-url is allowed only with --event auto_dialog');
    httpUrl('send-url', flags['send-url']);
    // Sent as typed: the server checks it against the client's allowlist and address rules.
    info['send_url'] = flags['send-url'];
  }
  const merged = { ...file, ...info };
  if (!file) {
    if (!merged['from_user_id'] && !merged['group_id']) throw new UsageError('--from USER or --group ID is required: message_info needs a sender');
    if (!merged['content']) {
      throw new UsageError(event === 'cmd_dialog' ? '--content is required: the command, e.g. --content stop_auto_reply' : '--content is required');
    }
  }
  return merged;
}

/** Where `serve` listens by default: <data-dir>/config.json's host and port, else the protocol's. */
export function defaultEndpoint(dataDir: string): string {
  let config;
  try {
    config = loadServerConfig(dataDir);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(`cannot tell the endpoint (${error.message}); give --endpoint URL`);
    throw error;
  }
  if (config.port === 0) throw new UsageError(`${dataDir}/config.json sets port 0 (a free port at each start); give --endpoint URL, the one serve printed`);
  const host = config.host === '0.0.0.0' ? '127.0.0.1' : config.host === '::' ? '::1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}${PATH}`;
}

export interface SignedRequest {
  timestamp: number;
  canonical: string;
  signingString: string;
  signature: string;
  body: string;
}

/** Signs exactly as the server verifies (src/main/auth), so the two cannot drift apart. */
export function signRequest(client: string, secret: string, info: Record<string, unknown>, timestamp: number): SignedRequest {
  let canonical: string;
  try {
    canonical = canonicalJson(info);
  } catch (error) {
    throw new UsageError(`--file: message_info cannot be canonicalized (RFC 8785): ${(error as Error).message}`);
  }
  const signed = signingString(timestamp, client, canonical);
  const signature = sign(hmacKey(secret), signed);
  return { timestamp, canonical, signingString: signed, signature, body: JSON.stringify({ client, timestamp, signature, message_info: info }) };
}

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
const label = (name: string, value: string | number): string => `${`${name}:`.padEnd(16)}${value}`;

function pretty(text: string): { text: string; json: Record<string, unknown> | null } {
  try {
    const json = JSON.parse(text) as unknown;
    return { text: JSON.stringify(json, null, 2), json: json !== null && typeof json === 'object' ? (json as Record<string, unknown>) : null };
  } catch {
    return { text, json: null };
  }
}

/** What a refusal means for this request, where the tool knows more than the server could say. */
function hints(body: Record<string, unknown> | null, req: SignedRequest, client: string, nowSeconds: number): string[] {
  if (body?.['code'] === 'invalid_signature' && typeof body['signing_string_sha256'] === 'string') {
    const ours = sha256(req.signingString);
    return body['signing_string_sha256'] === ours
      ? [`hint: the server's signing_string_sha256 equals ours (${ours}): same signing string, so this secret is not an active secret of client ${client} (a typo? rotated? retired?)`]
      : [`hint: the server's signing_string_sha256 differs from ours (${ours}): it signed another text; compare with --dry-run (did something change the body on the way?)`];
  }
  if (body?.['code'] === 'timestamp_out_of_range' && typeof body['server_time'] === 'number') {
    return [`hint: this machine's clock is ${nowSeconds - body['server_time']} s off the server's (server_time ${body['server_time']}); fix the clock (NTP)`];
  }
  return [];
}

export async function sendCommand(argv: string[], io: SendIo): Promise<number> {
  const flags = parseCommandFlags('send', argv, OPTIONS);
  if (flags.help) {
    io.out(SEND_USAGE);
    return 0;
  }
  if (!flags.client) throw new UsageError('--client ID is required');
  let timestamp = Math.floor(io.nowMs() / 1000);
  if (flags.timestamp !== undefined) {
    if (!/^\d+$/.test(flags.timestamp)) throw new UsageError(`--timestamp must be Unix seconds, got "${flags.timestamp}"`);
    timestamp = Number(flags.timestamp);
    if (timestamp > LIMITS.createTimestampMax) throw new UsageError(`--timestamp ${flags.timestamp} looks like milliseconds: it is Unix seconds (divide by 1000)`);
  }
  const info = buildMessageInfo(flags);
  if (flags.wait !== undefined && !/^\d+$/.test(flags.wait)) throw new UsageError(`--wait must be whole seconds (0 tries once), got "${flags.wait}"`);
  const waitSeconds = flags.wait === undefined ? DEFAULT_WAIT_SECONDS : Number(flags.wait);
  const endpoint = flags.endpoint === undefined ? defaultEndpoint(flags['data-dir'] ?? defaultDataDir()) : endpointOf(flags.endpoint);
  const secret = await secretFrom(flags, io);
  if (secret === undefined) throw new UsageError('--secret S (or --secret-env NAME, or --secret-stdin) is required: the client secret to sign with');
  const req = signRequest(flags.client, secret, info, timestamp);

  if (flags['dry-run']) {
    if (info['event_type'] === 'auto_dialog' && info['send_url'] === undefined) {
      // Not an error: the client may have a default send_url, which only the server knows.
      io.err(
        `note: this auto_dialog has no send_url: the server refuses it (400 validation_failed) unless client ${flags.client} has a default send_url (npm run cli -- clients set ${flags.client} --send-url URL); or add --send-url URL`,
      );
    }
    io.out(
      [
        label('endpoint', endpoint),
        label('client', flags.client),
        label('timestamp', timestamp),
        label('canonical', req.canonical),
        label('signing_string', req.signingString),
        label('signature', req.signature),
        label('sha256', `${sha256(req.signingString)} (of signing_string; an invalid_signature answer's signing_string_sha256 should equal it)`),
        label('body', req.body),
        'dry run: nothing was sent',
      ].join('\n'),
    );
    return 0;
  }

  io.out(`POST ${endpoint}\n${String(info['event_type'])} from client ${flags.client}, msg_id ${String(info['msg_id'] ?? '(none: the server makes one)')}, timestamp ${timestamp}`);
  const started = performance.now();
  let res: Response;
  try {
    res = await postWhenListening(
      endpoint,
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: req.body },
      {
        waitMs: waitSeconds * 1000,
        answerTimeoutMs: ANSWER_TIMEOUT_MS,
        onWaiting: () => io.err(`waiting for ${endpoint} to accept connections (up to ${waitSeconds} s): serve prints "endpoint:" and "console:" when it is ready`),
      },
    );
  } catch (error) {
    if (error instanceof NotListeningError) {
      const waited = waitSeconds === 0 ? '' : `, still after ${waitSeconds} s`;
      io.err(`error: no answer from ${endpoint}: nothing listens there (${error.refusal}${waited}); is serve running? ${flags.endpoint === undefined ? '--endpoint URL sets the address' : 'check --endpoint against the "endpoint:" line serve printed'}`);
      return 3;
    }
    const e = error as Error & { cause?: Error };
    const why = e.name === 'TimeoutError' ? `no answer within ${ANSWER_TIMEOUT_MS / 1000} s` : (e.cause?.message ?? e.message);
    io.err(`error: no answer from ${endpoint}: ${why}${flags.endpoint === undefined ? ' (is serve running? --endpoint URL sets the address)' : ''}`);
    return 3;
  }
  const text = await res.text();
  const ms = Math.round(performance.now() - started);
  const body = pretty(text);
  const headers = SHOWN_HEADERS.flatMap((h) => (res.headers.has(h) ? [`${h}: ${res.headers.get(h)}`] : []));
  io.out([`HTTP ${res.status} ${res.statusText} (${ms} ms)`, ...headers, '', body.text].join('\n'));
  for (const line of hints(body.json, req, flags.client, Math.floor(io.nowMs() / 1000))) io.err(line);
  return res.ok ? 0 : 1;
}

function endpointOf(value: string): string {
  const url = httpUrl('endpoint', value);
  // The base URL serve listens on is enough: the path is the protocol's.
  if (url.pathname === '/') url.pathname = PATH;
  return url.href;
}
