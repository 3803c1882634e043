import type { Migration } from '../migrate.ts';

/**
 * Team mode: every audit row names its account and the address the action came from, and
 * sign-ins, failed sign-ins, sign-outs, account changes, assignment and notes are audited too
 * (protocol v1.2, "Team workflow"). As in migrations 15 and 16, SQLite cannot change a CHECK in
 * place: the table is rebuilt with its rows and ids (the console pages by id) and its indexes,
 * plus one per account and one per action for the admin's filters.
 */
export const AUDIT_ACTIONS_027 = [
  'reply', 'resolve', 'flag', 'stop', 'resume', 'assist', 'retry', 'cancel', 'client_settings', 'operator',
  'sign_in', 'sign_in_failed', 'sign_out', 'agent', 'assign', 'note',
] as const;

export const migration027: Migration = {
  version: 27,
  name: 'audit-accounts',
  up(db) {
    const actions = AUDIT_ACTIONS_027.map((a) => `'${a}'`).join(', ');
    db.exec(`
      CREATE TABLE audit_new (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        -- NULL where no operator was set (client changes; retries made before they required one), and
        -- on a failed sign-in, whose account may not exist (the id tried is in detail).
        operator_id TEXT,
        operator_name TEXT,
        action TEXT NOT NULL CHECK (action IN (${actions})),
        conversation_id TEXT,
        detail TEXT,
        -- The caller's remote address; NULL for the desktop window (IPC) and rows made before 27.
        address TEXT
      ) STRICT;
      INSERT INTO audit_new (id, at, operator_id, operator_name, action, conversation_id, detail)
        SELECT id, at, operator_id, operator_name, action, conversation_id, detail FROM audit;
      DROP TABLE audit;
      ALTER TABLE audit_new RENAME TO audit;
      CREATE INDEX audit_conversation ON audit(conversation_id, id) WHERE conversation_id IS NOT NULL;
      CREATE INDEX audit_operator ON audit(operator_id, id) WHERE operator_id IS NOT NULL;
      CREATE INDEX audit_action ON audit(action, id);
    `);
  },
};
