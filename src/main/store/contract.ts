import type { Store } from './index.ts';

/** A value now (SQLite, in this thread) or later (a database across the network). */
export type Awaitable<T> = T | Promise<T>;

type AwaitableQueries<Q> = {
  readonly [K in keyof Q]: Q[K] extends (...args: infer A) => infer R ? (...args: A) => Awaitable<R> : Q[K];
};

/** The query groups of the store (its connection, transaction and close are the SQLite store's own). */
export type QueryGroup = Exclude<keyof Store, 'connection' | 'transaction' | 'transactionAsync' | 'close'>;

/**
 * The store as code that must run on either database sees it (issue 30): the same query groups and
 * functions as the SQLite store, each result possibly a promise. Code written against it awaits
 * every call, so it runs unchanged on a store whose queries cross the network, while the SQLite
 * store passes as it is (no wrapper: awaiting a plain value costs one microtask). Callers run
 * inside the transaction their executor opened (the writer's savepoint, a PostgreSQL transaction),
 * one call after the other.
 */
export type StoreContract = { readonly [G in QueryGroup]: AwaitableQueries<Store[G]> };

type Part<G extends QueryGroup, K extends keyof StoreContract[G]> = Pick<StoreContract[G], K>;

/**
 * What the ingest commands (auto_dialog, cmd_dialog, answered website and assist requests, the
 * request log) need of a store: the part of the contract the PostgreSQL store implements first.
 * The commands declare it as their parameter, so a function they start to call is a compile
 * error until both stores have it.
 */
export interface IngestStore {
  readonly idempotency: Part<'idempotency', 'get' | 'put'>;
  readonly conversations: Part<'conversations', 'byKey' | 'byId' | 'create' | 'setAutoReply' | 'clearNeedsHuman' | 'flagNeedsHuman' | 'touch' | 'touchCustomer' | 'rename'>;
  readonly messages: Part<'messages', 'insert' | 'insertReply' | 'isOurReply' | 'countAutoRepliesSince' | 'cancelPendingReplies'>;
  readonly deliveries: Part<'deliveries', 'cancelForConversation'>;
  readonly people: Part<'people', 'remember'>;
  readonly workspace: Part<'workspace', 'heldByConsole'>;
  readonly requestLog: Part<'requestLog', 'insert' | 'addToAggregate'>;
}

/**
 * What the quiet-period auto reply (reply-commands.ts, the schedulers that fire it) needs of a
 * store: the pending customer messages, the engine's context lines, the per-minute cap's reply
 * times, and the writes that commit an answer. commitAutoReply and settleReplies declare it, so
 * both stores must have every function they call.
 */
export interface ReplyStore {
  readonly conversations: Part<'conversations', 'byId' | 'flagNeedsHuman' | 'touch'>;
  readonly messages: Part<'messages', 'insertReply' | 'settleReply' | 'pendingReplies' | 'autoReplyTimesSince' | 'context'>;
  readonly deliveries: Part<'deliveries', 'insert'>;
}

/**
 * What client administration (the CLI's `clients` commands, the console's client handlers,
 * client-admin.ts) needs of a store: the clients, their secrets, and the engines a client may
 * choose. The PostgreSQL store has it in pg/client-queries.ts, so an operator on PostgreSQL
 * manages clients with the same code (issue 30).
 */
export interface ClientAdminStore {
  readonly clients: Part<'clients', 'get' | 'list' | 'create' | 'setEnabled' | 'setSettings' | 'activeSecrets' | 'addSecret' | 'retireOlderSecrets'>;
  readonly engines: Part<'engines', 'get' | 'list'>;
}

/** A ClientAdminStore that also runs several calls as one transaction (add: check, create, first secret). */
export interface ClientStore extends ClientAdminStore {
  inTransaction<T>(work: (store: ClientAdminStore) => Promise<T>): Promise<T>;
}

/**
 * The SQLite store as a ClientStore: its own query groups, and one immediate transaction around
 * the work's awaits. Its calls return plain values, so the work runs to its end in the microtasks
 * of the call that started it, before any other request of this process is handled.
 */
export function sqliteClientStore(store: Store): ClientStore {
  return { clients: store.clients, engines: store.engines, inTransaction: (work) => store.transactionAsync(() => work(store)) };
}

/** What `kb add | import | list` need of a store: the data folder's SQLite file (cli/kb-commands.ts), or PostgreSQL (store/pg/kb-cli-queries.ts). */
export interface KbCliStore {
  add(question: string, answer: string, now: number): Awaitable<number>;
  /** Every pair or none (one transaction). */
  addAll(pairs: ReadonlyArray<{ question: string; answer: string; phrasings?: readonly string[] }>, now: number): Awaitable<void>;
  list(limit: number): Awaitable<Array<{ id: number; question: string; answer: string }>>;
}

/**
 * What `engines add | list | test | remove` need of a store: the data folder's SQLite file
 * (cli/engines-commands.ts), or PostgreSQL (store/pg/engine-cli-queries.ts), whose nodes' mirrors
 * read the engines anew every second.
 */
export interface EnginesCliStore {
  readonly engines: Part<'engines', 'get' | 'list' | 'save' | 'remove'>;
  /** The knowledge base `engines test` grounds its probe's answer in, by id. */
  kbEntries(): Awaitable<Array<{ id: number; question: string; answer: string; phrasings: string[] }>>;
}
