import type { StoreContract } from '../store/contract.ts';
import type { DeliveryRow } from '../store/deliveries.ts';
import type { ConsoleReads } from '../store/console-reads.ts';
import type { Reads } from '../store/worker-reader.ts';
import type { MessageWriter } from '../conversations/message-service.ts';
import type { Clock } from '../../shared/clock.ts';
import type { ConsoleHandlers, DeliveryItem, DeliveryNow } from '../../shared/console-api.ts';
import type { EventBus } from './events.ts';
import { ConsoleError } from './console-error.ts';
import { requireOperator } from './operator-guard.ts';
import type { Caller } from '../../shared/console-roles.ts';
import { auditDetail } from '../conversations/workspace-commands.ts';

type DeliveryStore = { readonly deliveries: Pick<StoreContract['deliveries'], 'get' | 'byIds' | 'deadIds' | 'lastAttempt'> };

export interface DeliveryHandlerDeps {
  store: DeliveryStore;
  /** The heavy reads (the problem list), awaited: see HandlerDeps. */
  reads: Reads<ConsoleReads>;
  writer: MessageWriter;
  clock: Clock;
  events: EventBus;
  /** The writer's delivery_retry, then a nudge to the outbox: the service's own path. */
  retryDelivery: (id: number) => Promise<boolean>;
  notifyOutbox: () => void;
  /** A try of the delivery already went out (its request was sent): a Cancel cannot call it back. */
  deliveryTrying: (id: number) => boolean;
}

type DeliveryMethods = 'listDeliveries' | 'retryDeliveries' | 'retryDelivery' | 'cancelDelivery' | 'getDeliveries';

/** Retry all: at most this many dead deliveries per call (the console shows as many). */
const RETRY_ALL_LIMIT = 5000;
/** Consoles are told about this many conversations of one retry at most; the attempts tell the rest. */
const EVENTS_MAX = 100;

/** "retrying" (pending after a failed attempt) and "dead" are the states an operator acts on. */
const failed = (d: DeliveryRow): boolean => d.state === 'dead' || (d.state === 'pending' && d.attempts > 0);

function stateWords(d: DeliveryRow): string {
  if (d.state === 'pending') return d.attempts > 0 ? 'retrying' : 'waiting for its first try';
  return d.state;
}

async function delivery(store: DeliveryStore, id: number): Promise<DeliveryRow> {
  const d = await store.deliveries.get(id);
  if (!d) throw new ConsoleError('not_found', `no delivery ${id}`);
  return d;
}

/**
 * The console's deliveries: the list of those that need attention, Retry (a dead one starts over),
 * Retry now (a retrying one goes at once), Cancel, and where retried ones stand. Every change
 * needs the operator and is audited under their name.
 */
export function createDeliveryHandlers(deps: DeliveryHandlerDeps): Pick<ConsoleHandlers, DeliveryMethods> {
  const { store, clock } = deps;

  function announce(rows: readonly DeliveryRow[], state: string): void {
    for (const conversationId of [...new Set(rows.map((d) => d.conversationId))].slice(0, EVENTS_MAX)) {
      deps.events.emit({ type: 'delivery', conversationId, state });
    }
  }

  async function retry(caller: Caller, ids: number[] | undefined, clientId: string | undefined) {
    const operator = requireOperator(caller);
    let rows: DeliveryRow[];
    if (ids) {
      // Named ones are checked first: a refusal changes nothing.
      rows = [];
      for (const id of new Set(ids)) {
        const d = await delivery(store, id);
        if (!clientId || d.clientId === clientId) rows.push(d);
      }
      const wrong = rows.find((d) => !failed(d));
      if (wrong) throw new ConsoleError('wrong_state', `delivery ${wrong.id} is ${stateWords(wrong)}: only a dead or retrying delivery can be retried`);
    } else {
      rows = await store.deliveries.byIds(await store.deliveries.deadIds(clientId ?? null, RETRY_ALL_LIMIT));
    }
    const changed = await Promise.all(rows.map((d) => deps.retryDelivery(d.id)));
    // One delivered or cancelled meanwhile is left out: nothing was retried.
    const retried = rows.filter((_, i) => changed[i]);
    if (retried.length > 0) {
      const conversations = new Set(retried.map((d) => d.conversationId));
      const detail = auditDetail({ retried: retried.length, ...(ids ? { ids: retried.slice(0, 50).map((d) => d.id) } : { all_dead: true }), ...(clientId ? { client: clientId } : {}) });
      const conversationId = conversations.size === 1 ? retried[0]!.conversationId : null;
      await deps.writer.submit({ kind: 'audit', entry: { at: clock.now(), operator, action: 'retry', conversationId, detail } });
      announce(retried, 'pending');
    }
    return { retried: retried.length, deliveries: retried.map((d) => ({ id: d.id, attempts: d.attempts })) };
  }

  return {
    async listDeliveries(input) {
      const { rows, labels, recipients } = await deps.reads.deliveryProblems(input.states, input.clientId ?? null, input.limit);
      return rows.map(
        (d): DeliveryItem => ({
          id: d.id,
          conversationId: d.conversationId,
          clientId: d.clientId,
          replyMsgId: d.replyMsgId,
          kind: d.kind,
          state: d.problem,
          attempts: d.attempts,
          nextAttemptAt: d.problem === 'retrying' ? d.nextAttemptAt : null,
          lastError: d.lastError,
          lastStatus: d.lastStatus,
          url: d.sendUrl,
          createdAt: d.createdAt,
          conversation: labels[d.conversationId] ?? null,
          to: recipients[d.id] ?? null,
        }),
      );
    },
    retryDeliveries: (input, caller) => retry(caller, input.ids, input.clientId),
    async retryDelivery(input, caller) {
      return { retried: (await retry(caller, [input.deliveryId], undefined)).retried === 1 };
    },
    async cancelDelivery(input, caller) {
      const operator = requireOperator(caller);
      const d = await delivery(store, input.deliveryId);
      const wrong = (now: DeliveryRow): ConsoleError =>
        new ConsoleError('wrong_state', `delivery ${now.id} is ${stateWords(now)}: only a retrying or dead delivery can be cancelled`);
      if (!failed(d)) throw wrong(d);
      const reason = `cancelled by ${operator.name} from the console`;
      const now = clock.now();
      const detail = auditDetail({ delivery: d.id, was: stateWords(d), attempts: d.attempts });
      const result = await deps.writer.submit({
        kind: 'delivery_cancel',
        deliveryId: d.id,
        reason,
        now,
        audit: { at: now, operator, action: 'cancel', conversationId: d.conversationId, detail },
      });
      // Sent meanwhile (its last try got through), say: the operator learns what it is now.
      if (result?.kind !== 'changed' || result.count === 0) throw wrong(await delivery(store, d.id));
      // The conversation's next delivery no longer waits behind this one.
      deps.notifyOutbox();
      announce([d], 'cancelled');
      // Asked after the commit: a try that ends meanwhile is still recorded, as the cancel keeps it.
      return { reason, tryOnTheWire: deps.deliveryTrying(d.id), attempts: d.attempts };
    },
    async getDeliveries(input) {
      const rows = await store.deliveries.byIds(input.ids);
      const out: DeliveryNow[] = [];
      for (const d of rows) {
        out.push({
          id: d.id,
          conversationId: d.conversationId,
          state: d.state,
          attempts: d.attempts,
          nextAttemptAt: d.state === 'pending' ? d.nextAttemptAt : null,
          lastStatus: d.lastStatus,
          lastError: d.lastError,
          lastTry: await store.deliveries.lastAttempt(d.id),
        });
      }
      return out;
    },
  };
}
