import type { StoreContract } from '../contract.ts';
import type { Store } from '../index.ts';
import { pgDeliveryActions } from './delivery-actions.ts';
import { pgDeliveryLaneQueries } from './delivery-lane-queries.ts';
import { pgDeliveryReads } from './delivery-reads.ts';
import { pgIngestStore } from './ingest-queries.ts';
import { pgReplyStore } from './reply-queries.ts';
import type { PgQueryable } from './pool.ts';

export type { AfterCancel } from './delivery-actions.ts';

/** Each query of a SQLite group, answered later (every PostgreSQL query is a promise). */
type Promised<Q> = { readonly [K in keyof Q]: Q[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : Q[K] };

/** The store contract's deliveries, as promises (so the outbox's callers need no Awaitable), and PostgreSQL's own. */
export type PgDeliveryQueries = Promised<Store['deliveries']> & Pick<ReturnType<typeof pgDeliveryActions>, 'recordAfterCancel' | 'leased'>;

/**
 * The deliveries group of the store on PostgreSQL (StoreContract['deliveries']): every function of
 * the SQLite store's (deliveries.ts, delivery-lanes.ts) with the same results, checked on both by
 * deliveries-both-stores.test.ts; insert and cancelForConversation are the reply and ingest
 * stores' own. Beyond the contract: recordAfterCancel (the record of a claimed try to a delivery
 * cancelled meanwhile) and leased (a node may have a try on the wire). How the console's changes
 * keep clear of a try in flight on another node: delivery-actions.ts.
 */
export function pgDeliveryQueries(db: PgQueryable): PgDeliveryQueries {
  const actions = pgDeliveryActions(db);
  const { insert } = pgReplyStore(db).deliveries;
  const { cancelForConversation } = pgIngestStore(db).deliveries;
  return {
    insert: async (d) => Number(await insert(d)),
    cancelForConversation: async (conversationId, reason, now) => Number(await cancelForConversation(conversationId, reason, now)),
    ...pgDeliveryLaneQueries(db),
    ...pgDeliveryReads(db),
    ...actions,
  };
}

/** The group as the lead's pgStore composes it: the compiler checks it against the contract. */
export const pgDeliveriesGroup: (db: PgQueryable) => StoreContract['deliveries'] = pgDeliveryQueries;
