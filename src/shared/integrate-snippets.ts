import { assertNever } from './assert-never.ts';
import { literal, NODE_JCS, PYTHON_JCS } from './integrate-code.ts';

/**
 * Ready-to-run programs that send one signed message, for the console's "Integrate" panel: a
 * website_dialog (answered in the response) or an auto_dialog from a 1:1 IM customer (answered later
 * at send_url; the receivers are in integrate-receivers.ts). Each is self-contained (Python's
 * standard library, Node without packages, bash with curl and openssl) and signs exactly as
 * docs/protocol.md section 3 says: HMAC-SHA256 over `timestamp.client.JCS(message_info)`. Values are
 * written as literals of the target language, so any client id or message text comes out quoted
 * correctly.
 */

export const SNIPPET_LANGUAGES = ['python', 'node', 'curl'] as const;
export type SnippetLanguage = (typeof SNIPPET_LANGUAGES)[number];

/** Where a snippet reads the secret from when the console does not have it to fill in. */
export const SECRET_ENV = 'SWITCHBOARD_SECRET';
/** Who the snippets' messages come from: one recognisable web conversation per client. */
export const SNIPPET_VISITOR = 'integration-test';
/**
 * The name the snippets send with it (from_user_nickname, protocol v1.2): the console shows a
 * sender's name where it would show the id, so an integrator who copies a snippet sends names.
 */
export const SNIPPET_NICKNAME = 'Integration test';
export const DEFAULT_SNIPPET_CONTENT = 'Hello! This is a test message from the Switchboard console.';

export const SENDER_EVENTS = ['website_dialog', 'auto_dialog'] as const;
export type SenderEvent = (typeof SENDER_EVENTS)[number];
/**
 * The send_url an auto_dialog snippet carries when the client has no default: it cannot resolve
 * (.invalid), and the snippets refuse to run while it is there.
 */
export const SEND_URL_PLACEHOLDER = 'https://CHANGE-ME.invalid/switchboard-replies';
const PLACEHOLDER_MARK = 'CHANGE-ME';

export interface SnippetInput {
  endpoint: string;
  clientId: string;
  /** The secret, only while the console may show it (right after it was made); else null: read from SECRET_ENV. */
  secret: string | null;
  content?: string;
  /** What the snippet sends; website_dialog when absent. */
  event?: SenderEvent;
  /** auto_dialog only: the client's default send_url, or null for SEND_URL_PLACEHOLDER. */
  sendUrl?: string | null;
}

export interface SnippetRun {
  file: string;
  command: string;
  needs: string;
}

/** The file each snippet is saved as, and the command that runs it. */
export const SNIPPET_RUN: Record<SnippetLanguage, SnippetRun> = {
  python: { file: 'send.py', command: 'python3 send.py', needs: 'Python 3.8+' },
  node: { file: 'send.mjs', command: 'node send.mjs', needs: 'Node.js 18+' },
  curl: { file: 'send.sh', command: 'bash send.sh', needs: 'bash, curl, openssl' },
};

/** The auto_dialog snippets get names of their own: an integrator may keep both kinds. */
export function senderRun(language: SnippetLanguage, event: SenderEvent = 'website_dialog'): SnippetRun {
  const run = SNIPPET_RUN[language];
  if (event === 'website_dialog') return run;
  const file = run.file.replace('send.', 'send_im.');
  return { ...run, file, command: run.command.replace(run.file, file) };
}

export function snippetFor(language: SnippetLanguage, input: SnippetInput): string {
  switch (language) {
    case 'python':
      return pythonSnippet(input);
    case 'node':
      return nodeSnippet(input);
    case 'curl':
      return curlSnippet(input);
    default:
      return assertNever(language, 'snippet language');
  }
}


const eventOf = (input: SnippetInput): SenderEvent => input.event ?? 'website_dialog';

function header(comment: string, input: SnippetInput, language: SnippetLanguage): string[] {
  const run = senderRun(language, eventOf(input));
  const what = eventOf(input) === 'auto_dialog'
    ? `send one signed auto_dialog (a customer's IM message) as client ${literal(input.clientId)}.`
    : `send one signed website_dialog as client ${literal(input.clientId)} and print the answer.`;
  return [
    `${comment} Switchboard: ${what}`,
    ...(eventOf(input) === 'auto_dialog'
      ? [`${comment} The response only says whether a reply is scheduled; the reply itself is POSTed to SEND_URL a few seconds later.`]
      : []),
    `${comment} Save as ${run.file}, run: ${run.command}   (${run.needs}; nothing to install)`,
  ];
}

export const secretNote = (comment: string): string =>
  `${comment} The secret, shown once by the console. Keep it out of source control: in production read it from ${SECRET_ENV}.`;

/** The SEND_URL line: the client's default, or a placeholder that must be changed. */
function sendUrlLine(comment: string, input: SnippetInput, assign: (value: string) => string): string {
  return input.sendUrl
    ? `${assign(input.sendUrl)}  ${comment} the client's default send_url; each message may name its own`
    : `${assign(SEND_URL_PLACEHOLDER)}  ${comment} CHANGE ME: your receiver's URL (the client has no default send_url)`;
}

const PLACEHOLDER_STOP = 'put your receiver\'s URL in SEND_URL first (see the Receiver snippet)';

export function pythonSnippet(input: SnippetInput): string {
  const content = input.content ?? DEFAULT_SNIPPET_CONTENT;
  const auto = eventOf(input) === 'auto_dialog';
  const secret = input.secret === null
    ? [`SECRET = os.environ.get(${literal(SECRET_ENV)}) or sys.exit(${literal(`set ${SECRET_ENV} to the client secret`)})`]
    : [secretNote('#'), `SECRET = ${literal(input.secret)}`];
  const sendUrl = !auto ? [] : [
    sendUrlLine('#', input, (url) => `SEND_URL = ${literal(url)}`),
    ...(input.sendUrl ? [] : [`if ${literal(PLACEHOLDER_MARK)} in SEND_URL:`, `    sys.exit(${literal(PLACEHOLDER_STOP)})`]),
  ];
  return [
    ...header('#', input, 'python'),
    'import hashlib, hmac, json, os, sys, time, urllib.error, urllib.request, uuid',
    'from decimal import Decimal',
    '',
    `ENDPOINT = ${literal(input.endpoint)}`,
    `CLIENT = ${literal(input.clientId)}`,
    ...secret,
    ...sendUrl,
    '',
    ...PYTHON_JCS,
    '',
    'message_info = {',
    `    "event_type": ${literal(eventOf(input))},`,
    '    "msg_id": f"python-{uuid.uuid4()}",',
    `    "from_user_id": ${literal(SNIPPET_VISITOR)},`,
    `    "from_user_nickname": ${literal(SNIPPET_NICKNAME)},  # shown in the console instead of the id`,
    ...(auto ? ['    "from_user_type": 2,  # a customer, in a 1:1 chat'] : []),
    `    "content": ${literal(content)},`,
    ...(auto ? ['    "send_url": SEND_URL,'] : []),
    '}',
    'timestamp = int(time.time())',
    'signing_string = f"{timestamp}.{CLIENT}.{jcs(message_info)}"',
    'signature = hmac.new(SECRET.encode("utf-8"), signing_string.encode("utf-8"), hashlib.sha256).hexdigest()',
    'body = {"client": CLIENT, "signature": signature, "timestamp": timestamp, "message_info": message_info}',
    'request = urllib.request.Request(ENDPOINT, data=json.dumps(body).encode("utf-8"), headers={"Content-Type": "application/json"}, method="POST")',
    'try:',
    '    with urllib.request.urlopen(request, timeout=60) as response:',
    '        status, headers, text = response.status, response.headers, response.read().decode("utf-8")',
    'except urllib.error.HTTPError as error:',
    '    status, headers, text = error.code, error.headers, error.read().decode("utf-8")',
    'print(f"HTTP {status}  X-Request-Id: {headers.get(\'X-Request-Id\')}")',
    'print(text)',
    'sys.exit(0 if status == 200 else 1)',
    '',
  ].join('\n');
}

export function nodeSnippet(input: SnippetInput): string {
  const content = input.content ?? DEFAULT_SNIPPET_CONTENT;
  const auto = eventOf(input) === 'auto_dialog';
  const secret = input.secret === null
    ? [
        `const SECRET = process.env.${SECRET_ENV};`,
        `if (!SECRET) {`,
        `  console.error(${literal(`set ${SECRET_ENV} to the client secret`)});`,
        '  process.exit(1);',
        '}',
      ]
    : [secretNote('//'), `const SECRET = ${literal(input.secret)};`];
  const sendUrl = !auto ? [] : [
    sendUrlLine('//', input, (url) => `const SEND_URL = ${literal(url)};`),
    ...(input.sendUrl ? [] : [`if (SEND_URL.includes(${literal(PLACEHOLDER_MARK)})) {`, `  console.error(${literal(PLACEHOLDER_STOP)});`, '  process.exit(1);', '}']),
  ];
  return [
    ...header('//', input, 'node'),
    "import { createHmac, randomUUID } from 'node:crypto';",
    '',
    `const ENDPOINT = ${literal(input.endpoint)};`,
    `const CLIENT = ${literal(input.clientId)};`,
    ...secret,
    ...sendUrl,
    '',
    ...NODE_JCS,
    '',
    'const messageInfo = {',
    `  event_type: '${eventOf(input)}',`,
    '  msg_id: `node-${randomUUID()}`,',
    `  from_user_id: ${literal(SNIPPET_VISITOR)},`,
    `  from_user_nickname: ${literal(SNIPPET_NICKNAME)}, // shown in the console instead of the id`,
    ...(auto ? ['  from_user_type: 2, // a customer, in a 1:1 chat'] : []),
    `  content: ${literal(content)},`,
    ...(auto ? ['  send_url: SEND_URL,'] : []),
    '};',
    'const timestamp = Math.floor(Date.now() / 1000);',
    "const signature = createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(`${timestamp}.${CLIENT}.${jcs(messageInfo)}`, 'utf8').digest('hex');",
    'const res = await fetch(ENDPOINT, {',
    "  method: 'POST',",
    "  headers: { 'content-type': 'application/json' },",
    '  body: JSON.stringify({ client: CLIENT, signature, timestamp, message_info: messageInfo }),',
    '});',
    "console.log(`HTTP ${res.status}  X-Request-Id: ${res.headers.get('x-request-id')}`);",
    'console.log(await res.text());',
    'process.exitCode = res.status === 200 ? 0 : 1;',
    '',
  ].join('\n');
}

/** A bash word: single-quoted, with any single quote closed, escaped and reopened. */
const sh = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

/** Literal JSON text, or a shell expansion inside double quotes. */
type Part = { text: string } | { shell: string };

/**
 * message_info as one bash word that expands to its RFC 8785 form: keys in code-unit order, no
 * white space, the msg_id (and SEND_URL) spliced in by the shell.
 */
function curlInfo(input: SnippetInput): string {
  const quoted = (shell: string): Part[] => [{ text: '"' }, { shell }, { text: '"' }];
  const fields: Record<string, Part[]> = {
    content: [{ text: literal(input.content ?? DEFAULT_SNIPPET_CONTENT) }],
    event_type: [{ text: literal(eventOf(input)) }],
    from_user_id: [{ text: literal(SNIPPET_VISITOR) }],
    from_user_nickname: [{ text: literal(SNIPPET_NICKNAME) }],
    msg_id: [{ text: '"curl-' }, { shell: '$TS-$$' }, { text: '"' }],
    ...(eventOf(input) === 'auto_dialog' ? { from_user_type: [{ text: '2' }], send_url: quoted('$SEND_URL') } : {}),
  };
  const parts: Part[] = [{ text: '{' }];
  Object.keys(fields).sort().forEach((key, i) => parts.push({ text: `${i ? ',' : ''}${literal(key)}:` }, ...fields[key]!));
  parts.push({ text: '}' });
  let word = '';
  let text = '';
  for (const part of parts) {
    if ('text' in part) {
      text += part.text;
      continue;
    }
    word += `${text ? sh(text) : ''}"${part.shell}"`;
    text = '';
  }
  return word + (text ? sh(text) : '');
}

export function curlSnippet(input: SnippetInput): string {
  const secret = input.secret === null
    ? [`SECRET="\${${SECRET_ENV}:?set ${SECRET_ENV} to the client secret}"`]
    : [secretNote('#'), `SECRET=${sh(input.secret)}`];
  const sendUrl = eventOf(input) !== 'auto_dialog' ? [] : [
    sendUrlLine('#', input, (url) => `SEND_URL=${sh(url)}`),
    ...(input.sendUrl ? [] : [`case "$SEND_URL" in *${PLACEHOLDER_MARK}*) echo ${sh(PLACEHOLDER_STOP)} >&2; exit 1;; esac`]),
  ];
  const body = `${sh(`{"client":${literal(input.clientId)},"signature":"`)}"$SIG"'","timestamp":'"$TS"',"message_info":'"$INFO"'}'`;
  return [
    ...header('#', input, 'curl'),
    `ENDPOINT=${sh(input.endpoint)}`,
    `CLIENT=${sh(input.clientId)}`,
    ...secret,
    ...sendUrl,
    'TS=$(date +%s)',
    '# message_info already in RFC 8785 canonical form (keys sorted, no spaces): these exact bytes are signed and sent.',
    `INFO=${curlInfo(input)}`,
    `SIG=$(printf '%s' "$TS.$CLIENT.$INFO" | openssl dgst -sha256 -hmac "$SECRET" -r | cut -d' ' -f1)`,
    `curl -sS -i "$ENDPOINT" -H 'content-type: application/json' \\`,
    `  --data-binary ${body}`,
    '',
  ].join('\n');
}
