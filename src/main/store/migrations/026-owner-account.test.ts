import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from '../migrate.ts';
import { MIGRATIONS } from './index.ts';

function storeOf25(operator: string | null): DatabaseSync {
  const db = new DatabaseSync(':memory:');
  db.exec('PRAGMA foreign_keys = ON');
  migrate(db, MIGRATIONS, 25);
  if (operator !== null) db.prepare("INSERT INTO settings (key, value) VALUES ('operator', ?)").run(operator);
  return db;
}

const agents = (db: DatabaseSync) => db.prepare('SELECT id, name, role, owner FROM agents ORDER BY id').all().map((r) => ({ ...r }));
const capacity = (db: DatabaseSync, id: string) => db.prepare('SELECT capacity FROM agents WHERE id = ?').get(id)!['capacity'];
const operatorSetting = (db: DatabaseSync) => db.prepare("SELECT value FROM settings WHERE key = 'operator'").get();

test('migration 26 turns the stored current operator into the owner account (an admin) and drops the setting', () => {
  const db = storeOf25('{"id":"ann","name":"Ann Lee"}');
  migrate(db, MIGRATIONS, 26);
  assert.deepEqual(agents(db), [{ id: 'ann', name: 'Ann Lee', role: 'admin', owner: 1 }]);
  assert.equal(capacity(db, 'ann'), 0, 'auto-assignment gives the owner nothing until an admin says otherwise');
  assert.equal(operatorSetting(db), undefined);
  assert.throws(() => db.prepare("INSERT INTO agents (id, name, role, created_at, updated_at, owner) VALUES ('x', 'X', 'admin', 0, 0, 1)").run(), /UNIQUE/, 'one owner only');
});

test('migration 26 on a store that never set an operator, or a hand-edited one, makes no owner yet; an agent of that id becomes the owner', () => {
  for (const value of [null, 'not json', '{"id":"","name":"x"}', '{"id":"a"}']) {
    const db = storeOf25(value);
    migrate(db, MIGRATIONS, 26);
    assert.deepEqual(agents(db), [], String(value));
    assert.equal(operatorSetting(db), undefined);
  }
  const db = storeOf25('{"id":"omar","name":"Omar K"}');
  db.prepare("INSERT INTO agents (id, name, role, password_hash, created_at, updated_at) VALUES ('omar', 'Omar', 'agent', 'scrypt$x', 0, 0)").run();
  migrate(db, MIGRATIONS, 26);
  assert.deepEqual(agents(db), [{ id: 'omar', name: 'Omar K', role: 'admin', owner: 1 }]);
  assert.equal(db.prepare("SELECT password_hash FROM agents WHERE id = 'omar'").get()!['password_hash'], 'scrypt$x', 'the password chosen stays');
});
