import type { Store } from '../store/index.ts';
import type { AttemptRecord } from '../store/deliveries.ts';
import { assertNever } from '../../shared/assert-never.ts';

export type DeliveryCommand =
  | ({ kind: 'delivery_attempt' } & AttemptRecord)
  | { kind: 'delivery_cancel'; deliveryId: number; reason: string; now: number }
  | { kind: 'delivery_retry'; deliveryId: number; now: number };

/** Returns how many deliveries changed (0 when one was cancelled or retried meanwhile). */
export function executeDeliveryCommand(store: Store, c: DeliveryCommand): number {
  switch (c.kind) {
    case 'delivery_attempt':
      return store.deliveries.recordAttempt(c) ? 1 : 0;
    case 'delivery_cancel':
      return store.deliveries.cancel(c.deliveryId, c.reason, c.now) ? 1 : 0;
    case 'delivery_retry':
      // The console's retry: a dead delivery starts over, one waiting for a retry goes now.
      return store.deliveries.retry(c.deliveryId, c.now) || store.deliveries.retryNow(c.deliveryId, c.now) ? 1 : 0;
    default:
      return assertNever(c, 'delivery command');
  }
}
