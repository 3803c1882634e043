import type { Clock } from '../../shared/clock.ts';
import type { ActiveClient } from '../auth/client-registry.ts';
import type { RateLimiter } from '../auth/rate-limiter.ts';
import { ReplayedSignature, signatureSeen } from '../auth/pg-replay-claims.ts';
import { isPgUnavailable, type PgQueryable } from '../store/pg/pool.ts';
import { createChatMessagesHandler, type ChatMessagesDeps } from './chat-messages.ts';
import { HttpProblem } from './problem.ts';

/** U+0000 as JSON writes it: \u0000 after an even number of backslashes (an odd one would make the text a literal backslash). */
const HOLDS_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/;

export interface PgChatMessagesDeps {
  registry: { lookup(id: string, now: number): ActiveClient | undefined; recheck(id: string, now: number): ActiveClient | undefined };
  /** The node's copy of the clients: read again at once for a client it does not know yet. */
  mirror: { refresh(): Promise<void> };
  service: ChatMessagesDeps['service'];
  rateLimiter: RateLimiter;
  clock: Clock;
  timestampToleranceSeconds: number;
  /** The replay window's table (auth/pg-replay-claims.ts) and its length. */
  db: PgQueryable;
  replayWindowMs: number;
}

/** Answered by the engine before anything is written: their replay is looked for first, or a replay would cost an answer. */
const ANSWERED_BEFORE_WRITE = new Set(['website_dialog', 'assist_dialog']);

/**
 * The integrator's endpoint on a PostgreSQL node (issue 30): the same handler as SQLite's, with
 * what differs on a shared database. A client unknown here may have been added on another
 * machine a moment ago; U+0000, which PostgreSQL's text cannot hold, is refused before anything
 * is stored; and the replay window is claimed in the request's own transaction, its refusal
 * (ReplayedSignature) turned into the first response for an exact retry, else 409. A replay
 * already committed is found before the engine answers a website or assist request, and before
 * a rate-limit refusal.
 */
export function createPgChatMessagesHandler(d: PgChatMessagesDeps) {
  const { registry, mirror, service } = d;
  const seen = (clientId: string, signature: string, now: number): Promise<boolean> => signatureSeen(d.db, clientId, signature, now, d.replayWindowMs);
  return createChatMessagesHandler({
    registry: {
      lookup: (id, now) => registry.lookup(id, now) ?? mirror.refresh().then(() => registry.recheck(id, now)),
      recheck: (id, now) => mirror.refresh().then(() => registry.recheck(id, now)),
    },
    // The signature is claimed in the request's own transaction (createPgIngestRunner), not before it;
    // a claim made apart from it would have to be released, and a release lost in an outage would
    // refuse the integrator's honest retry. Reads answer the two questions the protocol's order asks earlier.
    replay: {
      reserve: async (clientId, signature, now, eventType) => !(eventType && ANSWERED_BEFORE_WRITE.has(eventType) && (await seen(clientId, signature, now))),
      confirm: () => {},
      release: () => {},
      seen,
    },
    rateLimiter: d.rateLimiter,
    service: {
      handle: (a) => {
        if (HOLDS_NUL.test(a.canonicalInfo)) {
          return Promise.reject(new HttpProblem('validation_failed', 'message_info contains U+0000 (a NUL character), which this installation\'s database (PostgreSQL) cannot store; remove it and send again', {
            errors: [{ path: 'message_info', message: 'contains U+0000' }],
          }));
        }
        return service.handle(a).catch(async (error: unknown) => {
          if (!(error instanceof ReplayedSignature)) throw error;
          // As the in-memory guard's refusal: an exact retry of an accepted msg_id gets its first response.
          const stored = a.info.msg_id ? await service.storedResponse(a.client.id, a.info.event_type, a.info.msg_id, a.contentHash) : null;
          if (stored) return stored;
          throw new HttpProblem('replayed_request', 'this exact signed request was already accepted; sign each new request anew');
        });
      },
      storedResponse: service.storedResponse,
    },
    clock: d.clock,
    timestampToleranceSeconds: d.timestampToleranceSeconds,
    storeUnavailable: isPgUnavailable,
  });
}
