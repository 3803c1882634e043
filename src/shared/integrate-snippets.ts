import { assertNever } from './assert-never.ts';

/**
 * Ready-to-run programs that send one signed website_dialog, for the console's "Integrate" panel.
 * Each is self-contained (Python's standard library, Node without packages, bash with curl and
 * openssl) and signs exactly as protocol section 3 says: HMAC-SHA256 over
 * `timestamp.client.JCS(message_info)`. Values are written as literals of the target language, so
 * any client id or message text comes out quoted correctly.
 */

export const SNIPPET_LANGUAGES = ['python', 'node', 'curl'] as const;
export type SnippetLanguage = (typeof SNIPPET_LANGUAGES)[number];

/** Where a snippet reads the secret from when the console does not have it to fill in. */
export const SECRET_ENV = 'SWITCHBOARD_SECRET';
/** Who the snippets' messages come from: one recognisable web conversation per client. */
export const SNIPPET_VISITOR = 'integration-test';
export const DEFAULT_SNIPPET_CONTENT = 'Hello! This is a test message from the Switchboard console.';

export interface SnippetInput {
  endpoint: string;
  clientId: string;
  /** The secret, only while the console may show it (right after it was made); else null: read from SECRET_ENV. */
  secret: string | null;
  content?: string;
}

/** The file each snippet is saved as, and the command that runs it. */
export const SNIPPET_RUN: Record<SnippetLanguage, { file: string; command: string; needs: string }> = {
  python: { file: 'send.py', command: 'python3 send.py', needs: 'Python 3.8+' },
  node: { file: 'send.mjs', command: 'node send.mjs', needs: 'Node.js 18+' },
  curl: { file: 'send.sh', command: 'bash send.sh', needs: 'bash, curl, openssl' },
};

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

/** A JSON string literal is a valid string literal in JavaScript and Python alike. */
const literal = (text: string): string => JSON.stringify(text);

function header(comment: string, input: SnippetInput, language: SnippetLanguage): string[] {
  const run = SNIPPET_RUN[language];
  return [
    `${comment} Switchboard: send one signed website_dialog as client ${literal(input.clientId)} and print the answer.`,
    `${comment} Save as ${run.file}, run: ${run.command}   (${run.needs}; nothing to install)`,
  ];
}

const secretNote = (comment: string): string =>
  `${comment} The secret, shown once by the console. Keep it out of source control: in production read it from ${SECRET_ENV}.`;

export function pythonSnippet(input: SnippetInput): string {
  const content = input.content ?? DEFAULT_SNIPPET_CONTENT;
  const secret = input.secret === null
    ? [`SECRET = os.environ.get(${literal(SECRET_ENV)}) or sys.exit(${literal(`set ${SECRET_ENV} to the client secret`)})`]
    : [secretNote('#'), `SECRET = ${literal(input.secret)}`];
  return [
    ...header('#', input, 'python'),
    'import hashlib, hmac, json, os, sys, time, urllib.error, urllib.request, uuid',
    'from decimal import Decimal',
    '',
    `ENDPOINT = ${literal(input.endpoint)}`,
    `CLIENT = ${literal(input.clientId)}`,
    ...secret,
    '',
    '# RFC 8785 (JCS) canonical JSON: what the signature covers.',
    'def _number(x):',
    '    if isinstance(x, int) and abs(x) < 2**53:',
    '        return str(x)',
    '    x = float(x)',
    '    if x != x or x in (float("inf"), float("-inf")):',
    '        raise ValueError("NaN and Infinity are not JSON")',
    '    if x == 0:',
    '        return "0"',
    '    t = Decimal(repr(abs(x))).normalize().as_tuple()',
    '    digits = "".join(map(str, t.digits))',
    '    k, n = len(digits), len(digits) + t.exponent',
    '    if k <= n <= 21:',
    '        s = digits + "0" * (n - k)',
    '    elif 0 < n <= 21:',
    '        s = digits[:n] + "." + digits[n:]',
    '    elif -6 < n <= 0:',
    '        s = "0." + "0" * -n + digits',
    '    else:',
    '        s = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if n - 1 >= 0 else "-") + str(abs(n - 1))',
    '    return ("-" if x < 0 else "") + s',
    '',
    'def jcs(v):',
    '    if v is None or isinstance(v, bool):',
    '        return json.dumps(v)',
    '    if isinstance(v, (int, float)):',
    '        return _number(v)',
    '    if isinstance(v, str):',
    '        return json.dumps(v, ensure_ascii=False)',
    '    if isinstance(v, list):',
    '        return "[" + ",".join(jcs(x) for x in v) + "]"',
    '    keys = sorted(v, key=lambda k: k.encode("utf-16-be"))',
    '    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + jcs(v[k]) for k in keys) + "}"',
    '',
    'message_info = {',
    '    "event_type": "website_dialog",',
    '    "msg_id": f"python-{uuid.uuid4()}",',
    `    "from_user_id": ${literal(SNIPPET_VISITOR)},`,
    `    "content": ${literal(content)},`,
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
  const secret = input.secret === null
    ? [
        `const SECRET = process.env.${SECRET_ENV};`,
        `if (!SECRET) {`,
        `  console.error(${literal(`set ${SECRET_ENV} to the client secret`)});`,
        '  process.exit(1);',
        '}',
      ]
    : [secretNote('//'), `const SECRET = ${literal(input.secret)};`];
  return [
    ...header('//', input, 'node'),
    "import { createHmac, randomUUID } from 'node:crypto';",
    '',
    `const ENDPOINT = ${literal(input.endpoint)};`,
    `const CLIENT = ${literal(input.clientId)};`,
    ...secret,
    '',
    '// RFC 8785 (JCS) canonical JSON, what the signature covers: keys sorted by UTF-16 code units;',
    '// JSON.stringify already writes strings and numbers as JCS does (as the `canonicalize` package).',
    'const jcs = (v) =>',
    "  v === null || typeof v !== 'object' ? JSON.stringify(v)",
    "  : Array.isArray(v) ? `[${v.map(jcs).join(',')}]`",
    "  : `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${jcs(v[k])}`).join(',')}}`;",
    '',
    'const messageInfo = {',
    "  event_type: 'website_dialog',",
    '  msg_id: `node-${randomUUID()}`,',
    `  from_user_id: ${literal(SNIPPET_VISITOR)},`,
    `  content: ${literal(content)},`,
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

export function curlSnippet(input: SnippetInput): string {
  const content = input.content ?? DEFAULT_SNIPPET_CONTENT;
  const secret = input.secret === null
    ? [`SECRET="\${${SECRET_ENV}:?set ${SECRET_ENV} to the client secret}"`]
    : [secretNote('#'), `SECRET=${sh(input.secret)}`];
  // Keys in code-unit order and no whitespace: this text IS the canonical form, sent byte for byte.
  const info = `${sh(`{"content":${literal(content)},"event_type":"website_dialog","from_user_id":${literal(SNIPPET_VISITOR)},"msg_id":"curl-`)}"$TS-$$"'"}'`;
  const body = `${sh(`{"client":${literal(input.clientId)},"signature":"`)}"$SIG"'","timestamp":'"$TS"',"message_info":'"$INFO"'}'`;
  return [
    ...header('#', input, 'curl'),
    `ENDPOINT=${sh(input.endpoint)}`,
    `CLIENT=${sh(input.clientId)}`,
    ...secret,
    'TS=$(date +%s)',
    '# message_info already in RFC 8785 canonical form (keys sorted, no spaces): these exact bytes are signed and sent.',
    `INFO=${info}`,
    `SIG=$(printf '%s' "$TS.$CLIENT.$INFO" | openssl dgst -sha256 -hmac "$SECRET" -r | cut -d' ' -f1)`,
    `curl -sS -i "$ENDPOINT" -H 'content-type: application/json' \\`,
    `  --data-binary ${body}`,
    '',
  ].join('\n');
}
