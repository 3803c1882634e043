import type { Migration } from '../migrate.ts';

/** Named LLM engines; the API key is sealed like client secrets and never read back out. */
export const migration004: Migration = {
  version: 4,
  name: 'engines',
  up(db) {
    db.exec(`
      CREATE TABLE engines (
        name TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('openai')),
        config TEXT NOT NULL,
        api_key_sealed TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;
    `);
  },
};
