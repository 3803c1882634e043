import type { Db } from './db.ts';

/**
 * Pages of merge work after indexing `chars` characters of message text (migration 20 turned
 * FTS5's own lumpy automerge off). The budget must keep pace with what the index takes in, which
 * grows with the text (a trigram per character), or segments pile up until FTS5's crisis merge
 * does it all at once: a fixed 8 pages fell behind at 100 connections (bench/floor's server for
 * 40 s: 34 segments, p99 454 ms), and half a page per message fell behind on 2,000-character
 * lines (a review: 48 segments and a 12,598-page crisis merge). A page per 120 characters is half
 * a page per customer line of bench/ingest, which kept 10 segments over 441,896 messages as
 * automerge did. A level is merged once it holds 4 segments either way, so a larger budget merges
 * sooner, not more; FTS5 checks the budget between terms, so a step can overrun it somewhat.
 */
export const MERGE_STEP_MIN_PAGES = 8;
export const MERGE_STEP_CHARS_PER_PAGE = 120;
export function mergeStepPages(chars: number): number {
  return Math.max(MERGE_STEP_MIN_PAGES, Math.ceil(chars / MERGE_STEP_CHARS_PER_PAGE));
}

/** The message search index's queue (migration 14): filled by a trigger, indexed once per transaction. */
export function searchIndexQueries(db: Db) {
  // CROSS JOIN keeps the queue (a few rows) outside: without statistics on it the planner could walk every message instead.
  const queuedChars = db.prepare(
    'SELECT total(length(m.content)) AS chars FROM messages_fts_queue q CROSS JOIN messages m ON m.id = q.id',
  );
  const index = db.prepare(
    `INSERT INTO messages_fts (rowid, content)
     SELECT q.id, m.content FROM messages_fts_queue q CROSS JOIN messages m ON m.id = q.id WHERE m.content IS NOT NULL`,
  );
  const clear = db.prepare('DELETE FROM messages_fts_queue');
  const queued = db.prepare('SELECT count(*) AS n FROM messages_fts_queue');
  const merge = db.prepare("INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', ?)");
  return {
    /**
     * Indexes every queued message and empties the queue; the number indexed. Call inside the
     * transaction that wrote them, after the last savepoint, right before COMMIT.
     */
    flushQueue(): number {
      const n = Number(index.run().changes);
      // Most commits index nothing (delivery attempts, request log rows): no budget to read then.
      const chars = n > 0 ? (queuedChars.get() as { chars: number }).chars : 0;
      clear.run();
      if (n > 0) merge.run(mergeStepPages(chars));
      return n;
    },
    queued(): number {
      return (queued.get() as { n: number }).n;
    },
  };
}
