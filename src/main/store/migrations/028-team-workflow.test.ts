import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from '../migrate.ts';
import { MIGRATIONS } from './index.ts';

/** A store as version 27 left it: the owner, an agent, conversations with the one shared read marker. */
function storeOf27(): DatabaseSync {
  const db = new DatabaseSync(':memory:');
  db.exec('PRAGMA foreign_keys = ON');
  migrate(db, MIGRATIONS, 27);
  db.exec(`
    INSERT INTO clients (id, settings, created_at, updated_at) VALUES ('acme', '{}', 0, 0);
    INSERT INTO agents (id, name, role, created_at, updated_at, owner) VALUES ('boss', 'Boss', 'admin', 0, 0, 1);
    INSERT INTO agents (id, name, role, created_at, updated_at) VALUES ('ann', 'Ann', 'agent', 0, 0);
    INSERT INTO conversations (id, client_id, channel, peer, auto_reply, created_at, last_message_at, last_read_message_id, unread)
      VALUES ('c-read', 'acme', 'web', 'p1', 'active', 0, 0, 42, 3), ('c-never', 'acme', 'web', 'p2', 'active', 0, 0, 0, 7);
  `);
  return db;
}

test('migration 28 carries the shared read marker over as the owner\'s, and keeps it for a console with no account', () => {
  const db = storeOf27();
  migrate(db, MIGRATIONS, 28);
  assert.deepEqual(db.prepare('SELECT agent_id, conversation_id, last_read_message_id FROM read_markers').all().map((r) => ({ ...r })), [
    { agent_id: 'boss', conversation_id: 'c-read', last_read_message_id: 42 },
  ]);
  assert.deepEqual({ ...db.prepare("SELECT last_read_message_id, unread, assignee FROM conversations WHERE id = 'c-read'").get() }, { last_read_message_id: 42, unread: 3, assignee: null });
});

test('migration 28 on a store with no owner yet carries nothing over', () => {
  const db = storeOf27();
  db.exec("DELETE FROM agents WHERE id = 'boss'");
  migrate(db, MIGRATIONS, 28);
  assert.equal(db.prepare('SELECT count(*) AS n FROM read_markers').get()!['n'], 0);
});

test('an assignee follows its account: a renamed owner id carries it, a removed account leaves the conversation unassigned', () => {
  const db = storeOf27();
  migrate(db, MIGRATIONS, 28);
  db.exec("UPDATE conversations SET assignee = 'boss' WHERE id = 'c-read'; UPDATE conversations SET assignee = 'ann' WHERE id = 'c-never'");
  db.prepare("INSERT INTO read_markers (agent_id, conversation_id, last_read_message_id) VALUES ('ann', 'c-never', 1)").run();
  db.exec("UPDATE agents SET id = 'chief' WHERE id = 'boss'");
  assert.equal(db.prepare("SELECT assignee FROM conversations WHERE id = 'c-read'").get()!['assignee'], 'chief');
  assert.equal(db.prepare("SELECT agent_id FROM read_markers WHERE conversation_id = 'c-read'").get()!['agent_id'], 'chief');
  db.exec("DELETE FROM agents WHERE id = 'ann'");
  assert.equal(db.prepare("SELECT assignee FROM conversations WHERE id = 'c-never'").get()!['assignee'], null);
  assert.equal(db.prepare("SELECT count(*) AS n FROM read_markers WHERE agent_id = 'ann'").get()!['n'], 0);
  assert.throws(() => db.exec("UPDATE conversations SET assignee = 'nobody' WHERE id = 'c-read'"), /FOREIGN KEY/);
});

test('the Mine view and the capacity count have their indexes', () => {
  const db = storeOf27();
  migrate(db, MIGRATIONS, 28);
  const plan = (sql: string) => db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all().map((r) => String(r['detail'])).join(' | ');
  assert.match(plan("SELECT id FROM conversations c WHERE c.assignee = 'ann' ORDER BY c.last_message_at DESC, c.id LIMIT 100"), /conversations_assignee/);
  assert.match(plan("SELECT count(*) FROM conversations o WHERE o.assignee = 'ann' AND o.needs_human = 1"), /conversations_open_assigned/);
  assert.match(plan("SELECT * FROM notes WHERE conversation_id = 'c' AND after_message_id >= 1 AND after_message_id < 9"), /notes_conversation/);
});
