import { createHash } from 'node:crypto';
import type { Clock } from '../../shared/clock.ts';
import { LIMITS, messageInfoSchema } from '../../shared/protocol/message-schema.ts';
import { checkScenarioRules, issuesDetail } from '../../shared/protocol/scenario-rules.ts';
import type { ActiveClient } from '../auth/client-registry.ts';
import type { RateLimiter } from '../auth/rate-limiter.ts';
import { canonicalJson, canonicalJsonInTurns } from '../auth/canonical-json.ts';
import { signingString, verify } from '../auth/signature.ts';
import type { Awaitable } from '../store/contract.ts';
import { EngineTimeout } from '../engines/ask.ts';
import type { Outcome } from '../conversations/write-commands.ts';
import type { Accepted } from '../conversations/message-service.ts';
import { fieldErrors, parseEnvelope } from './envelope.ts';
import { HttpProblem } from './problem.ts';
import { unknownFieldsDetail, unknownFieldsOverLimit } from './unknown-fields.ts';

/** What the request log learns about a request as it goes through the pipeline. */
export interface RequestFacts {
  clientId: string | null;
  eventType: string | null;
  msgId: string | null;
  conversationId: string | null;
  replayed: boolean;
  authenticated?: boolean;
}

/** A response: a value to serialize, JSON text serialized earlier, or plain text (metrics). */
export type Reply = { status: number; headers?: Record<string, string> } & ({ body: unknown } | { json: string } | { text: string });

/**
 * What the handler needs of the node it runs in. Each may answer now (SQLite: memory and this
 * thread's database) or later (PostgreSQL: a shared database across the network), so the same
 * checks run in the same order on both.
 */
export interface ChatMessagesDeps {
  registry: {
    lookup(id: string, now: number): Awaitable<ActiveClient | undefined>;
    /** After a signature failed: the client may have rotated its secret a moment ago. */
    recheck(id: string, now: number): Awaitable<ActiveClient | undefined>;
  };
  /** (client, signature) pairs accepted within the replay window (auth/replay-guard.ts; on PostgreSQL, a table every node shares). */
  replay: {
    /** False when the pair was seen within the window; `eventType` lets a store that claims later check early where it must. */
    reserve(clientId: string, signature: string, now: number, eventType: string | null): Awaitable<boolean>;
    confirm(clientId: string, signature: string, now: number): Awaitable<void>;
    release(clientId: string, signature: string): Awaitable<void>;
    /**
     * Asked only when the rate limit refuses a request whose pair `reserve` let through: a store
     * whose claim comes later (PostgreSQL's, in the request's transaction) says whether the pair
     * was seen, so a replay is answered 409 before 429, in the protocol's order.
     */
    seen?(clientId: string, signature: string, now: number): Promise<boolean>;
  };
  rateLimiter: RateLimiter;
  service: {
    handle(a: Accepted): Promise<Outcome>;
    storedResponse(clientId: string, eventType: string, msgId: string, contentHash: string): Awaitable<Outcome | null>;
  };
  clock: Clock;
  timestampToleranceSeconds: number;
  /**
   * The store could not be reached (PostgreSQL down or restarting): the request is answered 503
   * with Retry-After and nothing was stored, so the integrator's retry is safe. SQLite's busy
   * database is recognised here too.
   */
  storeUnavailable?: (error: unknown) => boolean;
}

const sqliteBusy = (error: unknown): boolean => /database is (locked|busy)/i.test((error as Error)?.message ?? '');

/**
 * Above this body size the checks yield to the event loop between stages: on a 9.3 MB body (two
 * attachments) parsing, canonical form plus HMAC, and hashing plus validation take 10-30 ms each,
 * 60-70 ms in one piece, during which no other request, timer or delivery would be served.
 */
const YIELD_ABOVE_BYTES = 1024 * 1024;
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const short = (v: unknown, max: number): string | null => (typeof v === 'string' ? v.slice(0, max) : null);

function success(outcome: Extract<Outcome, { kind: 'ok' }>, facts: RequestFacts): Reply {
  facts.conversationId = outcome.conversationId;
  facts.msgId = outcome.msgId;
  facts.replayed = outcome.replayed;
  return { status: outcome.status, json: outcome.body, headers: outcome.replayed ? { 'idempotent-replayed': 'true' } : {} };
}

/** POST /custom-im/chat-messages: the checks of section 3 in their order, then the scenario. */
export function createChatMessagesHandler(deps: ChatMessagesDeps) {
  const storeDown = (): HttpProblem =>
    new HttpProblem('service_unavailable', 'the database cannot be reached; retry shortly (a message with a msg_id is never stored twice)', { headers: { 'retry-after': '5' } });

  async function handle(requestId: string, body: Buffer, facts: RequestFacts): Promise<Reply> {
    try {
      return await check(requestId, body, facts);
    } catch (error) {
      // From any step that reads the store (the client, the replay table, a stored response, the scenario).
      if (!(error instanceof HttpProblem) && deps.storeUnavailable?.(error)) throw storeDown();
      throw error;
    }
  }
  return handle;

  async function check(requestId: string, body: Buffer, facts: RequestFacts): Promise<Reply> {
    const env = parseEnvelope(body);
    facts.clientId = env.client;
    facts.eventType = short(env.messageInfo['event_type'], 32);
    facts.msgId = short(env.messageInfo['msg_id'], 128);

    const nowMs = deps.clock.now();
    let client = await deps.registry.lookup(env.client, nowMs);
    if (!client) throw new HttpProblem('unknown_client', `no client "${env.client}" is registered`);
    if (!client.enabled) throw new HttpProblem('client_disabled', `client "${env.client}" is disabled`);

    const serverTime = Math.floor(nowMs / 1000);
    if (Math.abs(serverTime - env.timestamp) > deps.timestampToleranceSeconds) {
      const hint = env.timestamp > LIMITS.createTimestampMax ? ': it looks like milliseconds; timestamp is Unix seconds (divide by 1000)' : '';
      throw new HttpProblem(
        'timestamp_out_of_range',
        `timestamp ${env.timestamp} is more than ${deps.timestampToleranceSeconds} s from server time ${serverTime}${hint}`,
        { extra: { server_time: serverTime } },
      );
    }

    const large = body.length > YIELD_ABOVE_BYTES;
    if (large) await nextTurn();
    let canonical: string;
    try {
      canonical = large ? await canonicalJsonInTurns(env.messageInfo, { source: body }, nextTurn) : canonicalJson(env.messageInfo, { source: body });
    } catch (error) {
      throw new HttpProblem('validation_failed', 'message_info cannot be canonicalized (RFC 8785)', {
        errors: [{ path: 'message_info', message: (error as Error).message }],
      });
    }
    const signed = signingString(env.timestamp, env.client, canonical);
    if (!verify(client.keys, signed, env.signature)) {
      const fresh = await deps.registry.recheck(env.client, nowMs);
      if (fresh?.enabled && verify(fresh.keys, signed, env.signature)) client = fresh;
      else throw new HttpProblem(
        'invalid_signature',
        'signature does not match any active secret: expected lowercase hex HMAC-SHA256 of timestamp + "." + client + "." + JCS(message_info)',
        // The integrator compares its own signing string's hash: a JCS difference shows without any secret.
        { extra: { signing_string_sha256: createHash('sha256').update(signed, 'utf8').digest('hex') } },
      );
    }
    facts.authenticated = true;
    if (large) await nextTurn();
    const contentHash = createHash('sha256').update(canonical).digest('hex');

    // A replay, unless it is an exact retry of an accepted msg_id: that one gets its first response.
    const refuseReplay = async (): Promise<Reply> => {
      const stored =
        facts.eventType && facts.msgId ? await deps.service.storedResponse(client.id, facts.eventType, facts.msgId, contentHash) : null;
      if (stored?.kind === 'ok') return success(stored, facts);
      throw new HttpProblem('replayed_request', 'this exact signed request was already accepted; sign each new request anew');
    };
    if (!(await deps.replay.reserve(client.id, env.signature, nowMs, facts.eventType))) return refuseReplay();

    let accepted = false;
    try {
      const rate = deps.rateLimiter.take(client.id, nowMs);
      if (!rate.allowed) {
        if (await deps.replay.seen?.(client.id, env.signature, nowMs)) return await refuseReplay();
        throw new HttpProblem('rate_limited', `client "${client.id}" exceeds its request rate`, {
          headers: { 'retry-after': String(rate.retryAfterSeconds) },
          extra: { retry_after: rate.retryAfterSeconds },
        });
      }

      if (large) await nextTurn();
      const parsed = messageInfoSchema.safeParse(env.messageInfo);
      if (!parsed.success) {
        throw new HttpProblem('validation_failed', 'message_info failed validation', { errors: fieldErrors('message_info', parsed.error) });
      }
      const info = parsed.data;
      const issues = checkScenarioRules(info, {
        hasDefaultSendUrl: client.settings.sendUrl !== undefined,
        clientId: client.id,
        allowedOrigins: client.settings.allowedOrigins,
      });
      const over = unknownFieldsOverLimit(env.messageInfo);
      if (over) {
        throw new HttpProblem('validation_failed', unknownFieldsDetail(over, issues.length), {
          errors: [...over.errors, ...issues.map(({ path, message }) => ({ path, message }))],
        });
      }
      const first = issues[0];
      if (first) throw new HttpProblem(first.code, issuesDetail(issues), { errors: issues.map(({ path, message }) => ({ path, message })) });

      let outcome: Outcome;
      try {
        outcome = await deps.service.handle({ requestId, client, info, canonicalInfo: canonical, contentHash, signature: env.signature });
      } catch (error) {
        if (error instanceof EngineTimeout) throw new HttpProblem('engine_timeout', error.message);
        if (sqliteBusy(error)) {
          // Another process (the CLI, a backup) held the write lock past the busy timeout.
          throw new HttpProblem('service_unavailable', 'the database is busy; nothing was stored, retry shortly', {
            headers: { 'retry-after': '1' },
          });
        }
        throw error;
      }
      if (outcome.kind === 'conflict') {
        throw new HttpProblem('msg_id_conflict', `msg_id "${outcome.msgId}" was already used for a different ${info.event_type} message`);
      }
      accepted = true;
      return success(outcome, facts);
    } finally {
      if (accepted) await deps.replay.confirm(client.id, env.signature, nowMs);
      else await deps.replay.release(client.id, env.signature);
    }
  }
}

export type ChatMessagesHandler = ReturnType<typeof createChatMessagesHandler>;
