import type { Migration } from '../migrate.ts';

/**
 * Message search on a text index (issues 10 and 12): an external-content FTS5 table with the
 * trigram tokenizer over messages.content, so a search of 3+ characters (Latin or CJK) reads
 * the index instead of every message. External content stores each text once; triggers keep it
 * in step with every write path (the writer inserts messages; nothing rewrites or deletes them
 * today, but the triggers cover it should that change). The backfill uses FTS5's 'rebuild',
 * which reads the messages in rowid order and flushes its buffer as it goes: bounded memory.
 */
export const migration009: Migration = {
  version: 9,
  name: 'message-search',
  up(db) {
    db.exec(`
      CREATE VIRTUAL TABLE messages_fts USING fts5(
        content, content = 'messages', content_rowid = 'id', tokenize = 'trigram'
      );
      CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages WHEN new.content IS NOT NULL BEGIN
        INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
      END;
      CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages WHEN old.content IS NOT NULL BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
      END;
      CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, content) SELECT 'delete', old.id, old.content WHERE old.content IS NOT NULL;
        INSERT INTO messages_fts (rowid, content) SELECT new.id, new.content WHERE new.content IS NOT NULL;
      END;
      INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
    `);
  },
};
