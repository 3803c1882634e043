import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from '../migrate.ts';
import { MIGRATIONS } from './index.ts';
import { migration031 } from './031-kb-proposals.ts';

test('migration 31 adds the proposals table and the audit action learn, keeping audit rows and ids', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 29);
  db.exec("INSERT INTO audit (id, at, operator_id, operator_name, action, conversation_id, detail, address) VALUES (41, 5, 'ann', 'Ann', 'note', 'c1', '{}', '10.0.0.1')");
  assert.throws(() => db.exec("INSERT INTO audit (at, action) VALUES (6, 'learn')"), /CHECK constraint failed/);
  // Whatever 30 is, 31 runs on a store of 29 (its own transaction, as migrate does).
  db.exec('BEGIN');
  migration031.up(db);
  db.exec('COMMIT');
  assert.deepEqual({ ...db.prepare('SELECT id, action, address FROM audit').get() }, { id: 41, action: 'note', address: '10.0.0.1' });
  db.exec("INSERT INTO audit (at, action, detail) VALUES (6, 'learn', '{}')");
  db.exec("INSERT INTO kb_proposals (kind, source, question, answer, created_at, updated_at) VALUES ('entry', 'handoff', 'q', 'a', 1, 1)");
  assert.equal(db.prepare('SELECT state FROM kb_proposals').get()!['state'], 'pending');
  assert.throws(() => db.exec("INSERT INTO kb_proposals (kind, source, question, answer, created_at, updated_at) VALUES ('entry', 'handoff', '', 'a', 1, 1)"), /CHECK constraint failed/);
  assert.throws(() => db.exec("UPDATE kb_proposals SET state = 'maybe'"), /CHECK constraint failed/);
  const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'audit' ORDER BY name").all().map((r) => r['name']);
  assert.deepEqual(indexes, ['audit_action', 'audit_conversation', 'audit_operator']);
});
