import type pg from 'pg';
import type { Clock } from '../../shared/clock.ts';
import { canonicalJson } from '../auth/canonical-json.ts';
import { sign, signingString } from '../auth/signature.ts';
import type { ActiveClient } from '../auth/client-registry.ts';
import { pgCodeOf, PG_RETRYABLE } from '../store/pg/pool.ts';
import { pgDeliveryQueries, type AfterCancel } from '../store/pg/delivery-queries.ts';
import { pgIngestStore } from '../store/pg/ingest-queries.ts';
import { createPgWorkQueue, type ClaimedDelivery, type DeliveryOutcome, type Lease } from '../store/pg/leases/pg-leases.ts';
import { classify, nextDelay, parseRetryAfter, type SendResult, type Verdict } from './retry-policy.ts';
import { deliveryInfoSchema } from './outbox.ts';
import type { Delivery } from './sender.ts';

/**
 * The request for one try, signed as the SQLite outbox signs it (section 7: the client's newest
 * key over timestamp.client.canonical message_info; the reply's msg_id as Idempotency-Key), or
 * the result that stands for it when it cannot be made.
 */
export function signedRequest(d: ClaimedDelivery, client: ActiveClient | undefined, now: number): Delivery | SendResult {
  const parsed = deliveryInfoSchema.safeParse(JSON.parse(d.messageInfo));
  if (!parsed.success) return { kind: 'error', error: `stored delivery is malformed: ${parsed.error.issues[0]?.message ?? 'invalid'}`, permanent: true };
  if (!client?.enabled || client.keys.length === 0) return { kind: 'error', error: `client ${d.clientId} is disabled or has no usable secret to sign with`, permanent: false };
  const timestamp = Math.floor(now / 1000);
  const signature = sign(client.keys[0]!, signingString(timestamp, client.id, canonicalJson(parsed.data)));
  const body = JSON.stringify({ client: client.id, timestamp, signature, message_info: parsed.data });
  return { url: d.sendUrl, body, idempotencyKey: d.replyMsgId };
}

/** What an attempt came to, by retry-policy.ts as on SQLite: the verdict and the outcome to record. */
export function outcomeOf(d: ClaimedDelivery, result: SendResult, clock: Clock, random?: () => number): { verdict: Verdict; outcome: DeliveryOutcome } {
  let verdict = classify(result);
  const status = result.kind === 'response' ? result.status : null;
  const error = result.kind === 'error' ? result.error : `HTTP ${result.status}`;
  let delay: number | null = null;
  if (verdict === 'retry') {
    delay = nextDelay(d.roundAttempts + 1, result.kind === 'response' ? parseRetryAfter(result.retryAfter, clock.now()) : null, random);
    if (delay === null) verdict = 'dead';
  }
  switch (verdict) {
    case 'sent':
      return { verdict, outcome: { kind: 'sent', status } };
    case 'retry':
      return { verdict, outcome: { kind: 'retry', at: clock.now() + (delay ?? 0), status, error } };
    case 'dead':
      return { verdict, outcome: { kind: 'dead', status, error } };
  }
}

/**
 * - recorded: the attempt is the delivery's; `alert` when it died and its conversation newly needs a human.
 * - AfterCancel: the delivery was cancelled meanwhile (sent, counted), or the claim was lost.
 */
export type RecordResult = { kind: 'recorded'; alert: boolean } | { kind: AfterCancel };

/**
 * Records one attempt under its claim. A death flags the conversation in the same transaction
 * (as delivery-commands.ts does on SQLite), so the flag stands or falls with the record; the
 * transaction runs again after a deadlock or serialization failure (an ingest transaction may
 * hold the conversation and wait for its deliveries).
 */
export async function recordAttempt(
  pool: pg.Pool,
  d: ClaimedDelivery,
  lease: Lease,
  attempt: { startedAt: number; durationMs: number; outcome: DeliveryOutcome; now: number },
): Promise<RecordResult> {
  if (attempt.outcome.kind !== 'dead') {
    if (await createPgWorkQueue(pool).completeDelivery(d.id, lease, attempt)) return { kind: 'recorded', alert: false };
    return { kind: await pgDeliveryQueries(pool).recordAfterCancel(d.id, lease, attempt) };
  }
  for (let tries = 1; ; tries++) {
    const c = await pool.connect();
    let broken = false;
    try {
      await c.query('BEGIN');
      let result: RecordResult;
      if (await createPgWorkQueue(c).completeDelivery(d.id, lease, attempt)) {
        // A reply that will never arrive leaves the customer unanswered: a person has to step in.
        result = { kind: 'recorded', alert: await pgIngestStore(c).conversations.flagNeedsHuman(d.conversationId, attempt.now, 'delivery_failed') };
      } else {
        result = { kind: await pgDeliveryQueries(c).recordAfterCancel(d.id, lease, attempt) };
      }
      await c.query('COMMIT');
      return result;
    } catch (error) {
      // A connection that cannot even roll back is not handed out again.
      await c.query('ROLLBACK').catch(() => void (broken = true));
      if (tries >= 3 || !PG_RETRYABLE.has(pgCodeOf(error) ?? '')) throw error;
    } finally {
      c.release(broken);
    }
  }
}
