import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from '../migrate.ts';
import { MIGRATIONS } from './index.ts';

test('migration 25 adds agents, sign-in links and sessions to a store made by version 24, leaving its data as it was', () => {
  const db = new DatabaseSync(':memory:');
  db.exec('PRAGMA foreign_keys = ON');
  migrate(db, MIGRATIONS, 24);
  db.prepare("INSERT INTO settings (key, value) VALUES ('operator', '{\"id\":\"ann\",\"name\":\"Ann Lee\"}')").run();
  assert.equal(migrate(db, MIGRATIONS, 25), 25);
  assert.deepEqual({ ...db.prepare("SELECT value FROM settings WHERE key = 'operator'").get() }, { value: '{"id":"ann","name":"Ann Lee"}' }, 'the current operator stays until the console signs in by account');
  db.prepare("INSERT INTO agents (id, name, role, created_at, updated_at) VALUES ('ann', 'Ann Lee', 'admin', 0, 0)").run();
  db.prepare("INSERT INTO sessions (digest, agent_id, created_at, last_seen_at) VALUES ('d1', 'ann', 0, 0)").run();
  db.prepare("INSERT INTO sign_in_links (digest, agent_id, expires_at, created_at) VALUES ('l1', 'ann', 1, 0)").run();
  assert.throws(() => db.prepare("INSERT INTO sessions (digest, agent_id, created_at, last_seen_at) VALUES ('d2', 'nobody', 0, 0)").run(), /FOREIGN KEY/);
  db.prepare("DELETE FROM agents WHERE id = 'ann'").run();
  assert.deepEqual([db.prepare('SELECT count(*) AS n FROM sessions').get()!['n'], db.prepare('SELECT count(*) AS n FROM sign_in_links').get()!['n']], [0, 0]);
});
