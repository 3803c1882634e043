import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from '../migrate.ts';
import { MIGRATIONS } from './index.ts';

test('migration 27 keeps every audit row and id, adds the address, and accepts the team actions', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 26);
  db.prepare("INSERT INTO audit (id, at, operator_id, operator_name, action, conversation_id, detail) VALUES (7, 5, 'ann', 'Ann', 'reply', 'c', '{}')").run();
  assert.throws(() => db.prepare("INSERT INTO audit (at, action) VALUES (1, 'sign_in')").run(), /CHECK/);
  migrate(db, MIGRATIONS, 27);
  assert.deepEqual({ ...db.prepare('SELECT * FROM audit').get() }, { id: 7, at: 5, operator_id: 'ann', operator_name: 'Ann', action: 'reply', conversation_id: 'c', detail: '{}', address: null });
  for (const action of ['sign_in', 'sign_in_failed', 'sign_out', 'agent', 'assign', 'note']) db.prepare("INSERT INTO audit (at, action, address) VALUES (1, ?, '10.0.0.2')").run(action);
  assert.throws(() => db.prepare("INSERT INTO audit (at, action) VALUES (1, 'anything')").run(), /CHECK/);
  const plan = db.prepare("EXPLAIN QUERY PLAN SELECT * FROM audit WHERE operator_id = 'ann' ORDER BY id DESC LIMIT 5").all().map((r) => String(r['detail'])).join(' ');
  assert.match(plan, /audit_operator/, 'the filter by agent has its index');
});
