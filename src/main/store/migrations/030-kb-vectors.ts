import type { Migration } from '../migrate.ts';

/**
 * Embedding vectors of the knowledge base, for engines with an embedding model: one row per text
 * embedded (an entry's question and each "also asked as" phrasing) and model, keyed by a hash of
 * the text, so an edit leaves the old text's row unused (and pruned) rather than wrong. A table of
 * its own, not a column of kb_entries: writing vectors must not change the knowledge base's
 * version (kb_fts), which would make every engine re-read the entries after each batch.
 */
export const migration030: Migration = {
  version: 30,
  name: 'kb-vectors',
  up(db) {
    db.exec(`
      CREATE TABLE kb_vectors (
        entry_id INTEGER NOT NULL REFERENCES kb_entries (id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        dims INTEGER NOT NULL CHECK (dims > 0),
        vector BLOB NOT NULL CHECK (length(vector) = dims * 4),
        created_at INTEGER NOT NULL,
        PRIMARY KEY (entry_id, model, text_hash)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX kb_vectors_model ON kb_vectors (model, entry_id);
    `);
  },
};
