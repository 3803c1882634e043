import { assertNever } from './assert-never.ts';
import { literal, NODE_JCS, PYTHON_JCS } from './integrate-code.ts';
import { SECRET_ENV, secretNote, type SnippetRun } from './integrate-snippets.ts';

/**
 * Ready-to-run receivers for the replies Switchboard delivers to a send_url, for the console's
 * "Integrate" panel. Each verifies a delivery exactly as docs/protocol.md section 8 says (the
 * signature over `timestamp.client.JCS(message_info)` with the client's secret, the timestamp within
 * 300 s), deduplicates on Idempotency-Key, prints the reply, and answers 503 to what it cannot
 * verify: any 4xx is final, so a 401 over a drifted clock or a secret not yet updated would lose
 * every reply for good, where a 503 is retried for about 28 hours.
 */

export const RECEIVER_LANGUAGES = ['python', 'node'] as const;
export type ReceiverLanguage = (typeof RECEIVER_LANGUAGES)[number];
/** The port a receiver listens on unless given one (the same as `npm run cli -- receive`). */
export const RECEIVER_PORT = 9000;

export interface ReceiverInput {
  clientId: string;
  /** The secret, only while the console may show it (right after it was made); else null: read from SECRET_ENV. */
  secret: string | null;
}

export const RECEIVER_RUN: Record<ReceiverLanguage, SnippetRun> = {
  python: { file: 'receive.py', command: `python3 receive.py ${RECEIVER_PORT}`, needs: 'Python 3.8+' },
  node: { file: 'receive.mjs', command: `node receive.mjs ${RECEIVER_PORT}`, needs: 'Node.js 18+' },
};

export function receiverFor(language: ReceiverLanguage, input: ReceiverInput): string {
  switch (language) {
    case 'python':
      return pythonReceiver(input);
    case 'node':
      return nodeReceiver(input);
    default:
      return assertNever(language, 'receiver language');
  }
}

function header(comment: string, input: ReceiverInput, language: ReceiverLanguage): string[] {
  const run = RECEIVER_RUN[language];
  return [
    `${comment} Switchboard: receive the replies to client ${literal(input.clientId)} (deliveries to your send_url), verify and print them.`,
    `${comment} Save as ${run.file}, run: ${run.command}   (${run.needs}; nothing to install)`,
    `${comment} The argument is the port (default ${RECEIVER_PORT}; 0 picks a free one). Then make the URL it prints the send_url:`,
    `${comment}   npm run cli -- clients set ${input.clientId} --send-url URL   (or Reply settings in the console)`,
    `${comment} Answers 200 to a verified delivery and 503 to anything else: any 4xx would be final (docs/protocol.md section 8).`,
  ];
}

const NO_SECRET = `set ${SECRET_ENV} to the client secret (while you rotate: new,old)`;

export function pythonReceiver(input: ReceiverInput): string {
  const secrets = input.secret === null
    ? [`SECRETS = [s for s in os.environ.get(${literal(SECRET_ENV)}, "").split(",") if s] or sys.exit(${literal(NO_SECRET)})`]
    : [secretNote('#'), `SECRETS = [${literal(input.secret)}]  # while you rotate, the new secret and the old one`];
  return [
    ...header('#', input, 'python'),
    'import hashlib, hmac, json, os, sys, time',
    'from decimal import Decimal',
    'from http.server import BaseHTTPRequestHandler, HTTPServer',
    '',
    `CLIENT = ${literal(input.clientId)}`,
    ...secrets,
    'HOST = "127.0.0.1"  # "0.0.0.0" when Switchboard runs on another machine',
    `PORT = int(sys.argv[1]) if len(sys.argv) > 1 else ${RECEIVER_PORT}`,
    'seen = set()  # Idempotency-Keys handled; keep them (in your database) for 28 hours or more',
    '',
    ...PYTHON_JCS,
    '',
    'def verified(body):',
    '    if not isinstance(body, dict) or body.get("client") != CLIENT or not isinstance(body.get("signature"), str):',
    '        return False',
    '    timestamp = body.get("timestamp")',
    '    if type(timestamp) is not int or abs(time.time() - timestamp) > 300:',
    '        return False  # stale, or this clock is off',
    '    data = f"{timestamp}.{CLIENT}.{jcs(body.get(\'message_info\'))}".encode("utf-8")',
    '    return any(hmac.compare_digest(hmac.new(s.encode("utf-8"), data, hashlib.sha256).hexdigest(), body["signature"]) for s in SECRETS)',
    '',
    'class Receiver(BaseHTTPRequestHandler):',
    '    def do_POST(self):',
    '        try:',
    '            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))',
    '            ok = verified(body)',
    '        except ValueError:',
    '            ok = False',
    '        # 503, not 401: a bad or stale signature is usually a clock or a secret to fix here, and',
    '        # Switchboard retries a 503 later, where any 4xx would lose the reply for good.',
    '        if not ok:',
    '            print("503 refused: signature or timestamp does not verify", flush=True)',
    '            return self.answer(503)',
    '        key, info = self.headers.get("Idempotency-Key"), body["message_info"]',
    '        if key not in seen:',
    '            seen.add(key)  # post the reply into your chat here',
    '            print(f"200 reply {key} to {info.get(\'to_user_id\')}: {info.get(\'content\')}", flush=True)',
    '            print(json.dumps(info, ensure_ascii=False), flush=True)',
    '        self.answer(200)  # a repeat is acknowledged too, or it would come again',
    '',
    '    def answer(self, status):',
    '        self.send_response(status)',
    '        self.send_header("Content-Length", "0")',
    '        self.end_headers()',
    '',
    '    def log_message(self, *args):',
    '        pass',
    '',
    'server = HTTPServer((HOST, PORT), Receiver)',
    'print(f"Receiving deliveries for {CLIENT} at http://{HOST}:{server.server_address[1]}/", flush=True)',
    'server.serve_forever()',
    '',
  ].join('\n');
}

export function nodeReceiver(input: ReceiverInput): string {
  const secrets = input.secret === null
    ? [
        `const SECRETS = (process.env.${SECRET_ENV} ?? '').split(',').filter(Boolean);`,
        'if (SECRETS.length === 0) {',
        `  console.error(${literal(NO_SECRET)});`,
        '  process.exit(1);',
        '}',
      ]
    : [secretNote('//'), `const SECRETS = [${literal(input.secret)}]; // while you rotate, the new secret and the old one`];
  return [
    ...header('//', input, 'node'),
    "import { createServer } from 'node:http';",
    "import { createHmac, timingSafeEqual } from 'node:crypto';",
    '',
    `const CLIENT = ${literal(input.clientId)};`,
    ...secrets,
    "const HOST = '127.0.0.1'; // '0.0.0.0' when Switchboard runs on another machine",
    `const PORT = Number(process.argv[2] ?? ${RECEIVER_PORT});`,
    'const seen = new Set(); // Idempotency-Keys handled; keep them (in your database) for 28 hours or more',
    '',
    ...NODE_JCS,
    '',
    'function verified(body) {',
    "  if (body?.client !== CLIENT || !Number.isInteger(body.timestamp) || typeof body.signature !== 'string') return false;",
    '  if (Math.abs(Date.now() / 1000 - body.timestamp) > 300) return false; // stale, or this clock is off',
    '  const data = `${body.timestamp}.${CLIENT}.${jcs(body.message_info)}`;',
    "  const given = Buffer.from(body.signature, 'hex');",
    '  return SECRETS.some((secret) => {',
    "    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(data, 'utf8').digest();",
    '    return given.length === expected.length && timingSafeEqual(given, expected);',
    '  });',
    '}',
    '',
    'const server = createServer(async (req, res) => {',
    '  const chunks = [];',
    '  for await (const chunk of req) chunks.push(chunk);',
    '  let body = null;',
    '  try {',
    "    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));",
    '  } catch {}',
    '  // 503, not 401: a bad or stale signature is usually a clock or a secret to fix here, and',
    '  // Switchboard retries a 503 later, where any 4xx would lose the reply for good.',
    "  if (req.method !== 'POST' || !verified(body)) {",
    "    console.log('503 refused: signature or timestamp does not verify');",
    '    return res.writeHead(503).end();',
    '  }',
    "  const key = req.headers['idempotency-key'];",
    '  const info = body.message_info;',
    '  if (!seen.has(key)) {',
    '    seen.add(key); // post the reply into your chat here',
    '    console.log(`200 reply ${key} to ${info.to_user_id}: ${info.content}`);',
    '    console.log(JSON.stringify(info));',
    '  }',
    '  res.writeHead(200).end(); // a repeat is acknowledged too, or it would come again',
    '});',
    'server.listen(PORT, HOST, () => console.log(`Receiving deliveries for ${CLIENT} at http://${HOST}:${server.address().port}/`));',
    '',
  ].join('\n');
}
