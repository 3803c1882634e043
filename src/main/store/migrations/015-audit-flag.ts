import type { Migration } from '../migrate.ts';

/**
 * An agent can put a conversation in Needs you by hand ("Needs a human"), audited as 'flag'. The
 * audit's CHECK names its actions, and SQLite cannot change a CHECK in place: the table is rebuilt
 * with its rows and ids (the console's audit pages by id) and its index.
 */
export const migration015: Migration = {
  version: 15,
  name: 'audit-flag',
  up(db) {
    db.exec(`
      CREATE TABLE audit_new (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        -- NULL where no operator was set (retries and client changes do not require one).
        operator_id TEXT,
        operator_name TEXT,
        action TEXT NOT NULL CHECK (action IN ('reply', 'resolve', 'flag', 'stop', 'resume', 'assist', 'retry', 'client_settings', 'operator')),
        conversation_id TEXT,
        detail TEXT
      ) STRICT;
      INSERT INTO audit_new (id, at, operator_id, operator_name, action, conversation_id, detail)
        SELECT id, at, operator_id, operator_name, action, conversation_id, detail FROM audit;
      DROP TABLE audit;
      ALTER TABLE audit_new RENAME TO audit;
      CREATE INDEX audit_conversation ON audit(conversation_id, id) WHERE conversation_id IS NOT NULL;
    `);
  },
};
