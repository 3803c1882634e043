import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from '../migrate.ts';
import { MIGRATIONS } from './index.ts';

test('migration 33 lets the audit record kb_threshold, keeping every row and still refusing unknown actions', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 32);
  db.exec("INSERT INTO audit (at, operator_id, operator_name, action, conversation_id, detail) VALUES (1, 'boss', 'Boss', 'replay', NULL, '{}')");
  const insert = (action: string) => db.prepare("INSERT INTO audit (at, operator_id, operator_name, action, conversation_id, detail) VALUES (2, 'boss', 'Boss', ?, NULL, '{}')").run(action);
  assert.throws(() => insert('kb_threshold'), /CHECK constraint failed/);
  migrate(db, MIGRATIONS, 33);
  insert('kb_threshold');
  assert.throws(() => insert('no_such_action'), /CHECK constraint failed/);
  assert.deepEqual(db.prepare('SELECT id, action FROM audit ORDER BY id').all().map((r) => ({ ...r })), [{ id: 1, action: 'replay' }, { id: 2, action: 'kb_threshold' }]);
});
