import type { Migration } from '../migrate.ts';

/**
 * An agent can cancel a failing delivery from the console, audited as 'cancel'. As in migration
 * 15, the audit's CHECK names its actions and SQLite cannot change a CHECK in place: the table is
 * rebuilt with its rows and ids (the console's audit pages by id) and its index.
 */
export const migration016: Migration = {
  version: 16,
  name: 'audit-cancel',
  up(db) {
    db.exec(`
      CREATE TABLE audit_new (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        -- NULL where no operator was set (client changes; retries made before they required one).
        operator_id TEXT,
        operator_name TEXT,
        action TEXT NOT NULL CHECK (action IN ('reply', 'resolve', 'flag', 'stop', 'resume', 'assist', 'retry', 'cancel', 'client_settings', 'operator')),
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
