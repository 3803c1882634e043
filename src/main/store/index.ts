import { keepTempDataInMemory, openDatabase, WRITER_WAL_AUTOCHECKPOINT_PAGES, type Db } from './db.ts';
import { clientQueries } from './clients.ts';
import { conversationQueries } from './conversations.ts';
import { messageQueries } from './messages.ts';
import { idempotencyQueries } from './idempotency.ts';
import { requestLogQueries } from './request-log.ts';
import { kbQueries } from './kb.ts';
import { kbVectorQueries } from './kb-vectors.ts';
import { settingsQueries } from './settings.ts';
import { deliveryQueries } from './deliveries.ts';
import { traceQueries } from './trace.ts';
import { consoleQueries } from './console-queries.ts';
import { statsQueries } from './stats.ts';
import { engineQueries } from './engines.ts';
import { auditQueries, cannedQueries } from './audit.ts';
import { workspaceQueries } from './workspace-queries.ts';
import { searchIndexQueries } from './search-index.ts';
import { staffWaitQueries } from './staff-wait.ts';
import { peopleQueries } from './people.ts';
import { quoteQueries } from './quotes.ts';
import { accountQueries } from './accounts.ts';
import { teamQueries } from './team.ts';
import { proposalQueries } from './proposals.ts';
import { proposalSourceQueries } from './proposal-sources.ts';
import { replayQueries } from './replay.ts';

/** The typed SQL interface: every statement the application runs lives behind one of these. */
export function createStore(db: Db) {
  const deliveries = deliveryQueries(db);
  const workspace = workspaceQueries(db);
  const searchIndex = searchIndexQueries(db);
  /** A transaction's end: the messages it added go into the search index, then COMMIT. */
  const commitWith = <T>(result: T): T => {
    searchIndex.flushQueue();
    db.exec('COMMIT');
    return result;
  };
  return {
    /** For the group-commit queue, which owns transactions; queries go through the fields below. */
    connection: db,
    clients: clientQueries(db),
    accounts: accountQueries(db),
    /** Assignment, notes and per-account read markers (team workflow). */
    team: teamQueries(db),
    conversations: conversationQueries(db),
    messages: messageQueries(db),
    people: peopleQueries(db),
    /** What quoted messages (message_type 2) point at, by msg_id. */
    quotes: quoteQueries(db),
    idempotency: idempotencyQueries(db),
    requestLog: requestLogQueries(db),
    kb: kbQueries(db),
    /** Knowledge-base changes proposed from operators' answers (the Learn view). */
    proposals: proposalQueries(db),
    /** What a proposal is made from: the bot's last decision, the customer's question. */
    proposalSources: proposalSourceQueries(db),
    /** Embeddings of the knowledge base's texts, per embedding model (engines with an embedding model). */
    kbVectors: kbVectorQueries(db),
    settings: settingsQueries(db),
    deliveries,
    trace: traceQueries(db, (id) => deliveries.attempts(id)),
    console: consoleQueries(db, (ids) => workspace.kbQuestions(ids)),
    stats: statsQueries(db),
    engines: engineQueries(db),
    audit: auditQueries(db),
    canned: cannedQueries(db),
    workspace,
    staffWait: staffWaitQueries(db),
    /** Replays of past questions (issue 29): their runs and rows, and the questions they read. */
    replay: replayQueries(db),
    searchIndex,
    /** Runs `fn` in one immediate transaction (for the CLI, which does not use the write queue). */
    transaction<T>(fn: () => T): T {
      db.exec('BEGIN IMMEDIATE');
      try {
        return commitWith(fn());
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
    },
    /**
     * `transaction` for code written against the store contract (async commands): one immediate
     * transaction around all of `fn`'s awaits. Nothing else may use this connection meanwhile.
     */
    async transactionAsync<T>(fn: () => Promise<T>): Promise<T> {
      db.exec('BEGIN IMMEDIATE');
      try {
        return commitWith(await fn());
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
    },
    close(): void {
      if (db.isOpen) db.close();
    },
  };
}

export type Store = ReturnType<typeof createStore>;

/**
 * The writer thread's store: its connection checkpoints every WRITER_WAL_AUTOCHECKPOINT_PAGES,
 * indexes the messages a bulk load left in the search queue (one transaction, whose journal can
 * be tens of MB after a large load: it still goes to disk), then keeps temporary data in memory.
 */
export function openWriterStore(path: string, busyTimeoutMs: number): Store {
  const store = createStore(openDatabase(path, { busyTimeoutMs, walAutocheckpointPages: WRITER_WAL_AUTOCHECKPOINT_PAGES }));
  store.transaction(() => {});
  keepTempDataInMemory(store.connection);
  return store;
}
