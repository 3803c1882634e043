import type { StoreContract } from '../contract.ts';
import type { PgQueryable } from './pool.ts';

/**
 * search-index.ts on PostgreSQL, where there is nothing to do: SQLite indexes new messages from
 * a queue (messages_fts_queue) once per transaction, right before COMMIT, while PostgreSQL keeps
 * the trigram index on messages.content (messages_content_trgm, migration 1) itself, in the
 * transaction that writes the row. No queue: nothing is ever queued, and a flush indexes nothing.
 * Takes the connection only to be made as every other group is.
 */
export function pgSearchIndexQueries(_db?: PgQueryable): StoreContract['searchIndex'] {
  return {
    flushQueue: () => 0,
    queued: () => 0,
  };
}
