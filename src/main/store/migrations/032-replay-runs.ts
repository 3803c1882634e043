import type { Migration } from '../migrate.ts';
import type { DatabaseSync } from 'node:sqlite';

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
    addAuditAction(db, 'replay');
  },
};

function addAuditAction(db: DatabaseSync, action: string): void {
  const table = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'audit'").get() as { sql: string } | undefined;
  if (!table) throw new Error('migration 32: no audit table');
  const check = /CHECK \(action IN \(([^)]*)\)\)/.exec(table.sql);
  if (!check) throw new Error('migration 32: the audit table has no CHECK on its actions');
  const actions = check[1]!;
  if (actions.includes(`'${action}'`)) return;
  const rebuilt = table.sql
    .replace(/^CREATE TABLE "?audit"?/, 'CREATE TABLE audit_new')
    .replace(check[0], `CHECK (action IN (${actions}, '${action}'))`);
  const indexes = (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'audit' AND sql IS NOT NULL").all() as Array<{ sql: string }>).map((i) => i.sql);
  const columns = (db.prepare("SELECT name FROM pragma_table_info('audit') ORDER BY cid").all() as Array<{ name: string }>).map((c) => c.name).join(', ');
  db.exec(`
    ${rebuilt};
    INSERT INTO audit_new (${columns}) SELECT ${columns} FROM audit;
    DROP TABLE audit;
    ALTER TABLE audit_new RENAME TO audit;
    ${indexes.map((sql) => `${sql};`).join('\n')}
  `);
}
