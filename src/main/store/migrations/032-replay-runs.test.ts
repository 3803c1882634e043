import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from '../migrate.ts';
import { MIGRATIONS } from './index.ts';

test('migration 32 keeps every audit row and index, accepts the replay action and still refuses unknown ones', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 29);
  db.exec("INSERT INTO audit (at, operator_id, operator_name, action, conversation_id, detail, address) VALUES (5, 'a1', 'Ann', 'note', 'c1', 'x', '10.0.0.1')");
  const indexes = (): string[] => (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'audit' AND sql IS NOT NULL ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
  const before = indexes();
  migrate(db, MIGRATIONS, 32);
  assert.deepEqual(db.prepare('SELECT id, at, operator_id, action, conversation_id, address FROM audit').all().map((r) => ({ ...r })), [
    { id: 1, at: 5, operator_id: 'a1', action: 'note', conversation_id: 'c1', address: '10.0.0.1' },
  ]);
  assert.deepEqual(indexes(), before);
  db.exec("INSERT INTO audit (at, action, detail) VALUES (6, 'replay', '{}')");
  assert.throws(() => db.exec("INSERT INTO audit (at, action) VALUES (7, 'nonsense')"), /CHECK constraint failed/);
});

test('replay rows go with their run, and a row must say how its outcome changed', () => {
  const db = new DatabaseSync(':memory:');
  db.exec('PRAGMA foreign_keys = ON');
  migrate(db, MIGRATIONS, 32);
  db.exec(`INSERT INTO replay_runs (created_at, status, params) VALUES (1, 'running', '{}')`);
  const row = (change: string): string =>
    `INSERT INTO replay_rows (run_id, message_id, conversation_id, client_id, event_type, question, asked_at, before, after, change)
     VALUES (1, ${change === 'same' ? 1 : 2}, 'c', 'acme', 'auto_dialog', 'q', 0, '{}', '{}', '${change}')`;
  db.exec(row('same'));
  assert.throws(() => db.exec(row('sideways')), /CHECK constraint failed/);
  assert.throws(() => db.exec(`UPDATE replay_runs SET status = 'lost'`), /CHECK constraint failed/);
  db.exec('DELETE FROM replay_runs');
  assert.equal((db.prepare('SELECT count(*) AS n FROM replay_rows').get() as { n: number }).n, 0);
});
