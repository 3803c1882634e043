import type { Store } from './index.ts';
import type { StoreContract } from './contract.ts';

/**
 * Runs `work` as one transaction, handing it the store to use inside: SQLite's own store (one
 * immediate transaction around the work's awaits), or a PostgreSQL transaction's connection. The
 * work must call only `tx` (a call on another handle would run outside the transaction) and await
 * nothing but store calls: on SQLite the transaction holds the connection until the work ends.
 */
export type InTransaction<S = StoreContract> = <T>(work: (tx: S) => Promise<T>) => Promise<T>;

/** The SQLite store's transactions, for code written against the contract. */
export function sqliteInTransaction(store: Store): InTransaction<StoreContract> {
  return (work) => store.transactionAsync(() => work(store));
}
