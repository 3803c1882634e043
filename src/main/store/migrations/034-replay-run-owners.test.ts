import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from '../migrate.ts';
import { MIGRATIONS } from './index.ts';

test('migration 34 keeps every replay run, with no owner, and lets one owned run be running beside runs without one', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 33);
  // The console's run and a CLI run at once, as one SQLite process and its CLI allow, and a finished one.
  db.exec(`INSERT INTO replay_runs (created_at, status, params) VALUES (1, 'running', '{}'), (2, 'running', '{}'), (3, 'done', '{}')`);
  migrate(db, MIGRATIONS, 34);
  assert.deepEqual(
    db.prepare('SELECT id, status, node_id, heartbeat_at, progress_done, progress_total, cancel_requested_at FROM replay_runs ORDER BY id').all().map((r) => ({ ...r })),
    [1, 2, 3].map((id) => ({ id, status: id === 3 ? 'done' : 'running', node_id: null, heartbeat_at: null, progress_done: null, progress_total: null, cancel_requested_at: null })),
  );
  const owned = (node: string): unknown => db.prepare("INSERT INTO replay_runs (created_at, status, params, node_id, heartbeat_at) VALUES (4, 'running', '{}', ?, 4)").run(node);
  owned('node-a');
  assert.throws(() => owned('node-b'), /UNIQUE constraint failed: replay_runs\.status/);
  db.exec("INSERT INTO replay_runs (created_at, status, params) VALUES (5, 'running', '{}')");
  db.exec("UPDATE replay_runs SET status = 'cancelled' WHERE node_id = 'node-a'");
  owned('node-b');
});
