import type { Migration } from '../migrate.ts';

/**
 * "Also asked as": more ways customers put an entry's question. A JSON array in the entry's own
 * row rather than a table of its own, so an edit of the entry (the FTS triggers fire on every
 * UPDATE) changes the knowledge base's version and the engine re-reads it at once.
 */
export const migration029: Migration = {
  version: 29,
  name: 'kb-phrasings',
  up(db) {
    db.exec(`ALTER TABLE kb_entries ADD COLUMN phrasings TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(phrasings) AND json_type(phrasings) = 'array')`);
  },
};
