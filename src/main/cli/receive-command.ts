import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { canonicalJson } from '../auth/canonical-json.ts';
import { hmacKey, signingString, verify } from '../auth/signature.ts';
import { serverConfigSchema } from '../config/server-config.ts';
import { parseCommandFlags, parsePort, UsageError } from './args.ts';
import { secretFrom, type SecretIo } from './secret-input.ts';

export const RECEIVE_USAGE = `usage: npm run cli -- receive [--port 9000] [--host 127.0.0.1] [--client ID (--secret S | --secret-env NAME | --secret-stdin)] [--status 200]
  A send_url receiver: prints each delivery (docs/protocol.md section 8), says whether its signature verifies
  with the client's secret and whether its timestamp is fresh, and answers --status.
  Its first line is "listening: URL" (--port 0 picks a free port): use that URL as the send_url.
  Runs until Ctrl-C or SIGTERM. Exit status: 0 when every delivery verified (signature, when
  --client/--secret are given, and freshness), 1 when one did not or the port cannot be used, 2 on a bad flag.`;

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  client: { type: 'string' },
  secret: { type: 'string' },
  'secret-env': { type: 'string' },
  'secret-stdin': { type: 'boolean' },
  status: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The server's own window for request timestamps (docs/protocol.md section 3): a delivery is held to the same. */
export const FRESHNESS_SECONDS = serverConfigSchema.parse({}).timestampToleranceSeconds;
const BODY_LIMIT = 10 * 1024 * 1024;
const SHOWN_HEADERS = ['content-type', 'idempotency-key', 'user-agent'];

export interface Verifier {
  client: string;
  secret: string;
}

export interface Inspection {
  ok: boolean;
  lines: string[];
}

/** What a real receiver does with a delivery it cannot verify (docs/protocol.md section 8). */
export const REFUSE_WITH_503 =
  'a real receiver should answer 503 to this delivery, not a 4xx: any 4xx is final, so the reply would be lost; with 503 it comes back on the retry schedule (docs/protocol.md section 8)';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** One delivery body checked as an integrator's receiver should: shape, signature, timestamp. */
export function inspectDelivery(text: string, verifier: Verifier | undefined, nowSeconds: number): Inspection {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, lines: [text, 'NOT a delivery: the body is not JSON', REFUSE_WITH_503] };
  }
  const lines = [JSON.stringify(body, null, 2)];
  if (!isObject(body) || typeof body['client'] !== 'string' || !Number.isInteger(body['timestamp']) || typeof body['signature'] !== 'string' || !isObject(body['message_info'])) {
    return { ok: false, lines: [...lines, 'NOT a delivery: expected {client, timestamp, signature, message_info}', REFUSE_WITH_503] };
  }
  const { client, signature, message_info: info } = body;
  const timestamp = body['timestamp'] as number;
  let ok = true;
  if (!verifier) {
    lines.push('signature not checked: give --client and --secret to verify it');
  } else if (client !== verifier.client) {
    ok = false;
    lines.push(`signature NOT checked: signed by client "${client}", not "${verifier.client}"`);
  } else {
    let canonical: string;
    try {
      canonical = canonicalJson(info);
    } catch (error) {
      return { ok: false, lines: [...lines, `NOT a delivery: message_info cannot be canonicalized (RFC 8785): ${(error as Error).message}`, REFUSE_WITH_503] };
    }
    const signed = signingString(timestamp, client, canonical);
    if (verify([hmacKey(verifier.secret)], signed, signature)) {
      lines.push(`signature ok (client ${client})`);
    } else {
      ok = false;
      const hash = createHash('sha256').update(signed, 'utf8').digest('hex');
      lines.push(
        `signature does NOT verify with the secret given for client ${client} (signing_string sha256 ${hash}): a wrong, rotated or retired secret, or a body changed on the way`,
      );
    }
  }
  const skew = nowSeconds - timestamp;
  if (Math.abs(skew) <= FRESHNESS_SECONDS) {
    lines.push(`timestamp fresh: ${skew} s from this machine's clock (window ±${FRESHNESS_SECONDS} s)`);
  } else {
    ok = false;
    lines.push(`timestamp NOT fresh: ${skew} s from this machine's clock, outside ±${FRESHNESS_SECONDS} s (a clock is wrong, or this is a replay)`);
  }
  if (!ok) lines.push(REFUSE_WITH_503);
  return { ok, lines };
}

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= BODY_LIMIT) chunks.push(c);
    });
    req.on('end', () => resolve(size > BODY_LIMIT ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export interface ReceiveIo extends SecretIo {
  out: (line: string) => void;
  err: (line: string) => void;
  nowMs: () => number;
  /** Resolves with the signal's name when the receiver should stop. */
  stopped: () => Promise<string>;
}

export async function receiveCommand(argv: string[], io: ReceiveIo): Promise<number> {
  const flags = parseCommandFlags('receive', argv, OPTIONS);
  if (flags.help) {
    io.out(RECEIVE_USAGE);
    return 0;
  }
  const port = flags.port === undefined ? 9000 : parsePort(flags.port, '--port');
  const host = flags.host ?? '127.0.0.1';
  if (host.trim() === '') throw new UsageError('--host is empty');
  const status = flags.status === undefined ? 200 : Number(flags.status);
  if (!/^\d{3}$/.test(flags.status ?? '200') || status < 200 || status > 599) throw new UsageError(`--status must be an HTTP status 200..599, got "${flags.status}"`);
  const secret = await secretFrom(flags, io);
  if ((flags.client === undefined) !== (secret === undefined)) {
    throw new UsageError(flags.client === undefined ? 'a secret needs --client ID: the client whose secret it is' : '--client needs --secret S (or --secret-env NAME, or --secret-stdin) to verify signatures');
  }
  const verifier = flags.client !== undefined && secret !== undefined ? { client: flags.client, secret } : undefined;

  let count = 0;
  let failed = 0;
  const keys = new Map<string, number>();
  const server = createServer((req, res) => {
    const n = ++count;
    void readBody(req).then(
      (text) => {
        const at = new Date(io.nowMs()).toISOString();
        const headers = SHOWN_HEADERS.flatMap((h) => (req.headers[h] === undefined ? [] : [`${h}: ${String(req.headers[h])}`]));
        const check: Inspection = text === null ? { ok: false, lines: [`NOT a delivery: the body is over ${BODY_LIMIT} bytes`] } : inspectDelivery(text, verifier, Math.floor(io.nowMs() / 1000));
        const key = req.headers['idempotency-key'];
        const seen = typeof key === 'string' ? keys.get(key) : undefined;
        if (typeof key === 'string' && seen === undefined) keys.set(key, n);
        if (!check.ok) failed++;
        const answer = text === null ? 413 : status;
        io.out(
          [
            `--- delivery ${n}: ${req.method ?? '?'} ${req.url ?? ''} at ${at}`,
            ...headers,
            ...check.lines,
            ...(seen === undefined ? [] : [`repeat: idempotency-key ${String(key)} came before in delivery ${seen} (delivery is at least once: dedupe on it)`]),
            `answered ${answer}`,
          ].join('\n'),
        );
        res.writeHead(answer, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ received: n }));
      },
      () => res.destroy(),
    );
  });
  server.keepAliveTimeout = 1000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    const why = e.code === 'EADDRINUSE' ? 'that address is already in use' : e.code === 'EADDRNOTAVAIL' ? 'this machine has no such address' : e.message;
    io.err(`error: cannot listen on ${host}:${port} (--host, --port): ${why}`);
    return 1;
  }
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  io.out(`listening: http://${shown}:${address.port}/ (use it as send_url; answering ${status}; ${verifier ? `verifying signatures of client ${verifier.client}` : 'signatures not verified: no --client/--secret'})`);
  const signal = await io.stopped();
  server.close();
  server.closeAllConnections();
  io.out(`${signal}: stopped after ${count} deliver${count === 1 ? 'y' : 'ies'}, ${failed} of them failed verification`);
  return failed > 0 ? 1 : 0;
}
