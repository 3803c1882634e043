import type { Migration } from '../migrate.ts';

/**
 * The built-in engine's knowledge base. FTS5 with the trigram tokenizer matches Chinese (no
 * spaces between words) as well as English, at the cost of needing terms of 3+ characters;
 * the engine builds its queries accordingly.
 */
export const migration002: Migration = {
  version: 2,
  name: 'knowledge-base',
  up(db) {
    db.exec(`
      CREATE TABLE kb_entries (
        id INTEGER PRIMARY KEY,
        question TEXT NOT NULL,
        answer TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;

      CREATE VIRTUAL TABLE kb_fts USING fts5(
        question, answer, content = 'kb_entries', content_rowid = 'id', tokenize = 'trigram'
      );

      CREATE TRIGGER kb_entries_ai AFTER INSERT ON kb_entries BEGIN
        INSERT INTO kb_fts(rowid, question, answer) VALUES (new.id, new.question, new.answer);
      END;
      CREATE TRIGGER kb_entries_ad AFTER DELETE ON kb_entries BEGIN
        INSERT INTO kb_fts(kb_fts, rowid, question, answer) VALUES ('delete', old.id, old.question, old.answer);
      END;
      CREATE TRIGGER kb_entries_au AFTER UPDATE ON kb_entries BEGIN
        INSERT INTO kb_fts(kb_fts, rowid, question, answer) VALUES ('delete', old.id, old.question, old.answer);
        INSERT INTO kb_fts(rowid, question, answer) VALUES (new.id, new.question, new.answer);
      END;
    `);
  },
};
