import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import { addressKey, type PreAuthGate } from '../auth/address-limiter.ts';
import { assertNever } from '../../shared/assert-never.ts';
import type { ChunkCheck } from './body.ts';
import type { IntakeBudget, IntakeScope } from './intake-budget.ts';
import { createJsonScanner, type JsonBounds } from './json-scan.ts';
import { HttpProblem } from './problem.ts';

/** Retry-After of an intake refusal: the budget frees as requests in flight end, within a second or so. */
const RETRY_SECONDS = 1;

export interface BodyAdmission {
  /** Sees every chunk: the JSON bounds, and the budget of a body that declared no length. */
  check: ChunkCheck;
  /** Gives the body's bytes back to the budget once the request is answered. */
  release(): void;
}

export function intakeRefusal(scope: IntakeScope): HttpProblem {
  const retry = { headers: { 'retry-after': String(RETRY_SECONDS) }, extra: { retry_after: RETRY_SECONDS } };
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
  return new HttpProblem('rate_limited', `this address has more than ${limit} connections open; close some, or retry in ${RETRY_SECONDS} s`, {
    headers: { 'retry-after': String(RETRY_SECONDS) },
    extra: { retry_after: RETRY_SECONDS },
  });
}

/**
 * Whether a chat request's body may be read, and the checks it is read under. A connection that
 * has carried an authenticated request reads outside the budget (its client's own rate limit
 * governs it), so a flood from the same address does not cut off an integrator already talking.
 */
export function admitBody(
  req: IncomingMessage,
  deps: { bounds: JsonBounds; bodyLimitBytes: number; intake?: IntakeBudget; gate?: PreAuthGate },
): BodyAdmission | HttpProblem {
  const scanner = createJsonScanner(deps.bounds);
  const declared = req.headers['content-length'];
  const length = declared === undefined ? 0 : Number(declared);
  // A body declared past the limit is refused 413 without being read (section 1): nothing to hold.
  const unread = !(length <= deps.bodyLimitBytes);
  if (!deps.intake || unread || deps.gate?.trusts(req.socket)) return { check: (chunk) => scanner.feed(chunk), release: () => {} };
  const lease = deps.intake.reserve(addressKey(req.socket.remoteAddress), length);
  if (typeof lease === 'string') return intakeRefusal(lease);
  return {
    check(chunk) {
      scanner.feed(chunk);
      if (declared !== undefined) return;
      const refused = lease.grow(chunk.length);
      if (refused) throw intakeRefusal(refused);
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
