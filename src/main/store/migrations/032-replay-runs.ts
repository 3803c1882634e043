import type { Migration } from '../migrate.ts';
import { addAuditAction } from './audit-actions.ts';

/**
 * Replays (issue 29, "proving a change before it goes live"): past customer questions answered
 * offline with the current configuration and a candidate, kept to compare later. A run holds its
 * parameters, status and totals; each question's row holds both outcomes. Rows copy the question's
 * text and name its message without a foreign key: a replay never stands in the way of pruning
 * conversations, and a run reads the same after its messages are gone.
 *
 * Starting a replay from the console is audited as `replay`. SQLite cannot change a CHECK in
 * place, so the audit table is rebuilt as in migration 27, from its own current definition with
 * `replay` added: migrations that add other actions before this one keep theirs.
 */
export const migration032: Migration = {
  version: 32,
  name: 'replay-runs',
  up(db) {
    db.exec(`
      CREATE TABLE replay_runs (
        id INTEGER PRIMARY KEY,
        created_at INTEGER NOT NULL,
        finished_at INTEGER,
        status TEXT NOT NULL CHECK (status IN ('running', 'done', 'cancelled', 'failed')),
        -- Who started it: {"id","name"} of a console account, or null from the CLI.
        started_by TEXT CHECK (started_by IS NULL OR json_valid(started_by)),
        params TEXT NOT NULL CHECK (json_valid(params)),
        totals TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(totals)),
        error TEXT
      ) STRICT;

      CREATE TABLE replay_rows (
        run_id INTEGER NOT NULL REFERENCES replay_runs(id) ON DELETE CASCADE,
        message_id INTEGER NOT NULL,
        conversation_id TEXT NOT NULL,
        client_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        question TEXT NOT NULL,
        asked_at INTEGER NOT NULL,
        before TEXT NOT NULL CHECK (json_valid(before)),
        after TEXT NOT NULL CHECK (json_valid(after)),
        -- 'same', or how the outcome moved: now_answered, now_handoff, other_answer.
        change TEXT NOT NULL CHECK (change IN ('same', 'now_answered', 'now_handoff', 'other_answer')),
        PRIMARY KEY (run_id, message_id)
      ) STRICT, WITHOUT ROWID;
    `);
    addAuditAction(db, 'replay', 32);
  },
};
