import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from '../../shared/clock.ts';
import { HttpProblem } from './problem.ts';

/** The request stopped before its body was complete: the client went away, or its framing broke. */
export class ClientGone extends Error {
  readonly bytesReceived: number;
  constructor(bytesReceived: number) {
    super(`the client closed the connection after ${bytesReceived} bytes of body`);
    this.bytesReceived = bytesReceived;
  }
}

/** Looks at each chunk as it arrives; throwing (an HttpProblem) refuses the request there. */
export type ChunkCheck = (chunk: Buffer) => void;

/**
 * Reads the body up to `limit` bytes. A declared or actual excess is refused as soon as it is
 * known: the rest is never kept, so a huge upload costs us one chunk, not its size. `check` sees
 * every chunk first (the JSON bounds, the intake budget); its refusal, or the deadline's, ends the
 * read the same way.
 */
export interface ReadOptions {
  /** Sees every chunk first; throwing (an HttpProblem) refuses the request there. */
  check?: ChunkCheck;
  /**
   * Fill a buffer of the declared length as bytes come (one buffer, not chunks plus their copy).
   * Only for a caller already trusted: allocating what a stranger declares is memory it never sent.
   */
  preallocate?: boolean;
  /** The whole body must have arrived this long after the read starts, or it is a 408. */
  deadline?: { clock: Clock; ms: number };
}

export function readBody(req: IncomingMessage, limit: number, options: ReadOptions = {}): Promise<Buffer> {
  const { check, preallocate = false, deadline } = options;
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    return Promise.reject(tooLarge(limit));
  }
  const length = declared === undefined ? NaN : Number(declared);
  const whole = preallocate && Number.isSafeInteger(length) && length > 0 ? Buffer.allocUnsafe(length) : null;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (error: unknown): void => {
      cleanup();
      req.pause();
      reject(error);
    };
    const late = deadline?.clock.after(deadline.ms, () =>
      stop(new HttpProblem('request_timeout', `the body did not arrive within ${deadline.ms / 1000} s`)),
    );
    const onData = (chunk: Buffer): void => {
      if (size + chunk.length > limit) return stop(tooLarge(limit));
      try {
        check?.(chunk);
      } catch (error) {
        return stop(error);
      }
      // Node's parser never passes more than the declared length.
      if (whole) chunk.copy(whole, size);
      else chunks.push(chunk);
      size += chunk.length;
    };
    const onEnd = (): void => {
      cleanup();
      if (whole) return resolve(size === whole.length ? whole : whole.subarray(0, size));
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onGone = (): void => {
      cleanup();
      reject(new ClientGone(size));
    };
    const cleanup = (): void => {
      late?.();
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('aborted', onGone);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('aborted', onGone);
  });
}

function tooLarge(limit: number): HttpProblem {
  return new HttpProblem('payload_too_large', `body exceeds the limit of ${limit} bytes`, { extra: { limit_bytes: limit } });
}

/** How long and how much a refused client may go on sending before its connection is cut. */
export interface LingerBounds {
  maxBytes: number;
  maxMs: number;
}

export const DEFAULT_LINGER: LingerBounds = { maxBytes: 64 * 1024 * 1024, maxMs: 10_000 };

/**
 * After a refusal with `Connection: close`, what is left of the body: read on and discarded within
 * the section 1 bounds ('linger': a 413 or 415, the mistakes an honest client makes), or not read
 * at all ('brief': refusals before authentication). Reading on an attacker's 8 MB bodies in full
 * discarded 1.9 GB in 4 s of one flood, most of a core; even 64 KiB each was a body sent a byte per
 * chunk, thousands of events per refusal.
 */
export type CloseAfter = false | 'linger' | 'brief';

/** Sockets in a lingering close, each with the check of its bounds (called as data arrives). */
const lingering = new WeakMap<Socket, () => void>();

/** The bounds check of a socket in a lingering close, or undefined when it is not lingering. */
export function lingerCheck(socket: Socket): (() => void) | undefined {
  return lingering.get(socket);
}

/**
 * Arms the bounds of a lingering close on `socket`: it is destroyed once `maxMs` pass, or at the
 * check after more than `maxBytes` arrived. Returns that check.
 */
export function armLinger(socket: Socket, bounds: LingerBounds, clock: Clock): () => void {
  const start = socket.bytesRead;
  const cut = (): void => {
    cancel();
    socket.destroy();
  };
  const cancel = clock.after(bounds.maxMs, cut);
  const check = (): void => {
    if (socket.bytesRead - start > bounds.maxBytes) cut();
  };
  lingering.set(socket, check);
  socket.once('close', () => cancel());
  return check;
}

/**
 * Call before sending a refusal with `Connection: close` while the client may still be sending its
 * body. Node destroys such a socket as soon as the answer is written; unread bytes then make the
 * kernel answer with a reset, and a client that writes its whole body before it reads (Python's
 * urllib, often Node's fetch) gets "broken pipe" instead of our answer. So: half-close after the
 * answer, read and discard the rest of the body within `bounds`, then close.
 */
export function discardRestOfBody(req: IncomingMessage, bounds: LingerBounds, clock: Clock): void {
  const socket = req.socket;
  // Node's server calls destroySoon() once the answer is out; only our end of the stream closes.
  socket.destroySoon = () => void socket.end();
  const check = armLinger(socket, bounds, clock);
  const close = (): void => {
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  };
  if (req.readableEnded) return close();
  req.on('data', check);
  req.once('end', close);
  req.resume();
}
