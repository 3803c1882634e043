import type { Migration } from '../migrate.ts';

/**
 * Message search indexes once per transaction, not once per message (issue 12). FTS5 writes its
 * pending terms to disk at every savepoint of a transaction that touched it, and the writer wraps
 * each job in one: with migration 9's insert trigger every message became its own index segment,
 * and on a 1,000,000-message store the segment writes and merges made RELEASE cost 0.45–0.56 ms per
 * message, as much as the rest of the message's statements. Now the trigger only queues the new
 * row's id; the writer (and store.transaction) indexes the queue in one statement right before
 * COMMIT, outside every job's savepoint, so the index gets one segment per transaction and a
 * message is searchable in the same commit that stores it. Writers that bypass both (bulk loaders,
 * tests) call store.searchIndex.flushQueue() themselves or 'rebuild'.
 *
 * Delete and update stay in step whether or not the row was indexed yet: FTS5's 'delete' of a row
 * it never indexed would corrupt an external-content index, so a queued row only leaves the queue.
 */
export const migration014: Migration = {
  version: 14,
  name: 'search-index-queue',
  up(db) {
    // An older bulk loader killed midway dropped the insert trigger for good: the index has not
    // seen the messages stored since, and gets them all again below.
    const lost = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'messages_fts_insert'").get() === undefined;
    db.exec(`
      CREATE TABLE messages_fts_queue (id INTEGER PRIMARY KEY) STRICT;
      DROP TRIGGER IF EXISTS messages_fts_insert;
      DROP TRIGGER IF EXISTS messages_fts_delete;
      DROP TRIGGER IF EXISTS messages_fts_update;
      CREATE TRIGGER messages_fts_enqueue AFTER INSERT ON messages WHEN new.content IS NOT NULL BEGIN
        INSERT INTO messages_fts_queue (id) VALUES (new.id);
      END;
      CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages WHEN old.content IS NOT NULL BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, content)
          SELECT 'delete', old.id, old.content WHERE NOT EXISTS (SELECT 1 FROM messages_fts_queue WHERE id = old.id);
        DELETE FROM messages_fts_queue WHERE id = old.id;
      END;
      CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, content)
          SELECT 'delete', old.id, old.content WHERE old.content IS NOT NULL AND NOT EXISTS (SELECT 1 FROM messages_fts_queue WHERE id = old.id);
        DELETE FROM messages_fts_queue WHERE id = old.id AND new.content IS NULL;
        INSERT OR IGNORE INTO messages_fts_queue (id) SELECT new.id WHERE new.content IS NOT NULL;
      END;
    `);
    if (lost) db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')");
  },
};
