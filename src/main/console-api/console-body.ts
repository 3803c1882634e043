import type { IncomingMessage, ServerResponse } from 'node:http';

/** A console API body: small JSON documents (a knowledge-base import is the largest). */
export const MAX_API_BODY = 1024 * 1024;

export class BodyTooLarge extends Error {}
/** The client went away before its body was complete: nobody is left to answer. */
export class ClientAborted extends Error {}

/** Reads the body up to `limit`; the rest is left unread for `discardRest` to deal with. */
export function readApiBody(req: IncomingMessage, limit = MAX_API_BODY): Promise<Buffer> {
  if (Number(req.headers['content-length'] ?? 0) > limit) return Promise.reject(new BodyTooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      done();
      reject(new BodyTooLarge());
    };
    const onEnd = (): void => {
      done();
      resolve(Buffer.concat(chunks, size));
    };
    const onGone = (): void => {
      if (req.complete) return;
      done();
      reject(new ClientAborted());
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}

/**
 * Answers before the body is read (413), then reads and drops what the client still sends before
 * closing, so a client that writes its whole body before it reads (Python's urllib, Node's fetch)
 * receives the answer instead of a connection reset; but only so much (64 MiB or 10 s), then the
 * connection is cut. The answer is written whole but ended only once the body is drained: Node
 * would otherwise close a `Connection: close` socket at once, with unread bytes, which resets it.
 */
export function answerThenDrain(req: IncomingMessage, res: ServerResponse, status: number, headers: Record<string, string>, body: string, maxBytes = 64 * 1024 * 1024, maxMs = 10_000): void {
  res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)), connection: 'close' });
  res.write(body);
  if (req.complete) return void res.end();
  let dropped = 0;
  const cut = (): void => {
    clearTimeout(timer);
    req.socket.destroy();
  };
  const timer = setTimeout(cut, maxMs).unref();
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > maxBytes) cut();
  });
  req.on('end', () => {
    clearTimeout(timer);
    res.end();
  });
  req.on('close', () => clearTimeout(timer));
  req.on('error', () => {});
  req.resume();
}

/** Why a body was refused before any handler saw it (the console's Refusal, minus headers). */
export interface BodyRefusal {
  status: number;
  code: string;
  message: string;
}

/** A POSTed JSON body, checked as every console call is: JSON content type, size, syntax. */
export async function readJsonBody(req: IncomingMessage): Promise<{ input: unknown } | BodyRefusal> {
  const [type, ...params] = (req.headers['content-type'] ?? '').split(';').map((p) => p.trim().toLowerCase());
  const utf8 = params.every((p) => !p.startsWith('charset=') || p === 'charset=utf-8' || p === 'charset="utf-8"');
  // Forms and no-cors fetches can send only text/plain, urlencoded or multipart: never JSON.
  if (type !== 'application/json' || !utf8) return { status: 415, code: 'unsupported_media_type', message: 'console API calls need Content-Type: application/json' };
  let body: Buffer;
  try {
    body = await readApiBody(req);
  } catch (error) {
    if (!(error instanceof BodyTooLarge)) throw error;
    return { status: 413, code: 'payload_too_large', message: `a console API body is at most ${MAX_API_BODY} bytes` };
  }
  try {
    return { input: body.length ? (JSON.parse(body.toString('utf8')) as unknown) : {} };
  } catch {
    return { status: 400, code: 'invalid_input', message: 'body is not JSON' };
  }
}
