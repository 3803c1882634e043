import type { Db } from './db.ts';

/** The message search index's queue (migration 14): filled by a trigger, indexed once per transaction. */
export function searchIndexQueries(db: Db) {
  // CROSS JOIN keeps the queue (a few rows) outside: without statistics on it the planner could walk every message instead.
  const index = db.prepare(
    `INSERT INTO messages_fts (rowid, content)
     SELECT q.id, m.content FROM messages_fts_queue q CROSS JOIN messages m ON m.id = q.id WHERE m.content IS NOT NULL`,
  );
  const clear = db.prepare('DELETE FROM messages_fts_queue');
  const queued = db.prepare('SELECT count(*) AS n FROM messages_fts_queue');
  return {
    /**
     * Indexes every queued message and empties the queue; the number indexed. Call inside the
     * transaction that wrote them, after the last savepoint, right before COMMIT.
     */
    flushQueue(): number {
      const n = Number(index.run().changes);
      clear.run();
      return n;
    },
    queued(): number {
      return (queued.get() as { n: number }).n;
    },
  };
}
