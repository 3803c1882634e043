import type { StoreContract } from '../store/contract.ts';
import type { AttemptRecord } from '../store/deliveries.ts';
import type { NewAudit } from '../store/audit.ts';
import { assertNever } from '../../shared/assert-never.ts';

export type DeliveryCommand =
  | ({ kind: 'delivery_attempt'; conversationId: string } & AttemptRecord)
  /**
   * Without `audit`: the outbox's re-check cancels a pending auto reply. With it: the console's
   * Cancel of a retrying or dead delivery, recorded in the audit in the same transaction.
   */
  | { kind: 'delivery_cancel'; deliveryId: number; reason: string; now: number; audit?: NewAudit }
  | { kind: 'delivery_retry'; deliveryId: number; now: number };

/**
 * How many deliveries changed (0 when one was cancelled or retried meanwhile), and whether a
 * delivery that died newly flagged its conversation as needing a human (the cue for one alert).
 */
export async function executeDeliveryCommand(store: StoreContract, c: DeliveryCommand): Promise<{ count: number; alert?: 'delivery_failed' }> {
  switch (c.kind) {
    case 'delivery_attempt': {
      if (!await store.deliveries.recordAttempt(c)) return { count: 0 };
      // A reply that will never arrive leaves the customer unanswered: a person has to step in.
      return c.state === 'dead' && await store.conversations.flagNeedsHuman(c.conversationId, c.now, 'delivery_failed') ? { count: 1, alert: 'delivery_failed' } : { count: 1 };
    }
    case 'delivery_cancel': {
      if (!c.audit) return { count: await store.deliveries.cancel(c.deliveryId, c.reason, c.now) ? 1 : 0 };
      if (!await store.deliveries.cancelFailed(c.deliveryId, c.reason, c.now)) return { count: 0 };
      await store.audit.insert(c.audit);
      return { count: 1 };
    }
    case 'delivery_retry':
      // The console's retry: a dead delivery starts over, one waiting for a retry goes now.
      return { count: await store.deliveries.retry(c.deliveryId, c.now) || await store.deliveries.retryNow(c.deliveryId, c.now) ? 1 : 0 };
    default:
      return assertNever(c, 'delivery command');
  }
}
