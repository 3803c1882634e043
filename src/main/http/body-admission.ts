import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import { addressKey, type PreAuthGate } from '../auth/address-limiter.ts';
import { assertNever } from '../../shared/assert-never.ts';
import type { ReadOptions } from './body.ts';
import type { Clock } from '../../shared/clock.ts';
import type { IntakeBudget, IntakeScope } from './intake-budget.ts';
import { createJsonScanner, type JsonBounds } from './json-scan.ts';
import { HttpProblem } from './problem.ts';

/** Retry-After of an intake refusal: the budget frees as requests in flight end, within a second or so. */
const RETRY_SECONDS = 1;

export interface BodyAdmission {
  /** How the body is read: its per-chunk checks, and for a stranger no preallocation and a deadline. */
  read: ReadOptions;
  /** Gives the body's bytes back to the budget once the request is answered. */
  release(): void;
}

/**
 * What one chunk costs the budget: its bytes, but at least this. A body sent a byte per packet
 * made a Buffer of some 300 bytes per byte, and a 'data' event each: 2 MiB bodies took RSS from 1 to
 * 3.5 GB and a second of CPU per MiB, while the budget counted 2 MiB.
 */
export const MIN_CHUNK_CHARGE = 512;

/**
 * A stranger's body may come in many pieces only if they are not tiny: past MAX_SMALL_PIECES, an
 * average under MIN_PIECE_BYTES is refused. Each piece is an event on the main thread, and Node
 * parses every chunk of one 64 KiB read at once: 1-byte chunks held the loop 200 ms a read. A real
 * sender's TCP segments average over a kilobyte, even on a slow link.
 */
const MAX_SMALL_PIECES = 1024;
const MIN_PIECE_BYTES = 256;

function tooManyPieces(average: number): HttpProblem {
  return new HttpProblem('bad_request', `the body arrives in pieces of ${Math.round(average)} bytes on average; send it in pieces of ${MIN_PIECE_BYTES} bytes or more`);
}

const retry = { headers: { 'retry-after': String(RETRY_SECONDS) }, extra: { retry_after: RETRY_SECONDS } };

export function intakeRefusal(scope: IntakeScope): HttpProblem {
  switch (scope) {
    case 'address':
      return new HttpProblem(
        'rate_limited',
        `requests from this address that are not yet authenticated already hold all the memory one address may use; retry in ${RETRY_SECONDS} s`,
        retry,
      );
    case 'total':
      return new HttpProblem(
        'service_unavailable',
        `requests that are not yet authenticated already hold all the memory the server gives them; retry in ${RETRY_SECONDS} s`,
        retry,
      );
    default:
      return assertNever(scope);
  }
}

export function tooManyConnections(limit: number): HttpProblem {
  return new HttpProblem('rate_limited', `this address has more than ${limit} connections open; close some, or retry in ${RETRY_SECONDS} s`, retry);
}

/**
 * Whether a chat request's body may be read, and the checks it is read under. A stranger's body
 * is charged to the budget as its bytes arrive (the declared length only has to fit when it
 * starts): charging what it declared let four connections that declared 8 MiB and then sent a
 * byte a second hold the whole budget, and every new caller got 503 for a minute. It must also
 * arrive within the intake's deadline. A connection that has carried an authenticated request
 * reads outside the budget (its client's own rate limit governs it), so a flood from the same
 * address does not cut off an integrator already talking.
 */
export function admitBody(
  req: IncomingMessage,
  deps: { bounds: JsonBounds; bodyLimitBytes: number; clock: Clock; intake?: IntakeBudget; gate?: PreAuthGate },
): BodyAdmission | HttpProblem {
  const scanner = createJsonScanner(deps.bounds);
  const declared = Number(req.headers['content-length'] ?? 0);
  // A body declared past the limit is refused 413 without being read (section 1): nothing to hold.
  const unread = !(declared <= deps.bodyLimitBytes);
  if (!deps.intake || unread || deps.gate?.trusts(req.socket)) {
    return { read: { check: (chunk) => scanner.feed(chunk), preallocate: true }, release: () => {} };
  }
  const key = addressKey(req.socket.remoteAddress);
  const fits = deps.intake.fits(key, declared);
  if (fits) return intakeRefusal(fits);
  const lease = deps.intake.reserve(key, 0);
  if (typeof lease === 'string') return intakeRefusal(lease);
  let pieces = 0;
  let bytes = 0;
  return {
    read: {
      check(chunk) {
        pieces++;
        bytes += chunk.length;
        if (pieces > MAX_SMALL_PIECES && bytes / pieces < MIN_PIECE_BYTES) throw tooManyPieces(bytes / pieces);
        scanner.feed(chunk);
        const refused = lease.grow(Math.max(chunk.length, MIN_CHUNK_CHARGE));
        if (refused) throw intakeRefusal(refused);
      },
      deadline: { clock: deps.clock, ms: deps.intake.limits.bodyTimeoutMs },
    },
    release: () => lease.release(),
  };
}

/** How long a connection past its address's cap may take to send the request we refuse. */
const CROWDED_GRACE_MS = 2_000;

/**
 * Counts each address's open connections; those past the cap are returned in the set, to be
 * answered 429 at their first request (an HTTP answer the client can read, not a reset).
 */
export function watchConnections(server: Server, intake: IntakeBudget): WeakSet<Socket> {
  server.maxConnections = intake.limits.maxConnections;
  const crowded = new WeakSet<Socket>();
  server.on('connection', (socket: Socket) => {
    const key = addressKey(socket.remoteAddress);
    if (!intake.connected(key)) {
      crowded.add(socket);
      // One that sends nothing is not kept for the 30 s of the headers time-out.
      const cut = setTimeout(() => socket.destroy(), CROWDED_GRACE_MS).unref();
      socket.once('close', () => clearTimeout(cut));
    }
    socket.once('close', () => intake.closed(key));
  });
  return crowded;
}
