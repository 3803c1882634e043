import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from '../migrate.ts';
import { MIGRATIONS } from './index.ts';

/** A store as version 20 left it: these fields were unknown then, kept in message_info as received. */
function storeOfVersion20(): DatabaseSync {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 20);
  db.prepare("INSERT INTO clients (id, created_at, updated_at) VALUES ('acme', 0, 0)").run();
  const conv = db.prepare(
    "INSERT INTO conversations (id, client_id, channel, peer, group_id, customer_id, customer_name, created_at, last_message_at) VALUES (?, 'acme', 'im', ?, ?, ?, ?, 0, 0)",
  );
  conv.run('c_group', 'g:R:1069605174', 'R:1069605174', 'wxid_nora', 'old alias name');
  conv.run('c_nora', 'u:wxid_nora', null, 'wxid_nora', null);
  conv.run('c_li', 'u:li', null, 'li', 'Li (alias)');
  conv.run('c_plain', 'u:plain', null, 'plain', null);
  const msg = db.prepare(
    "INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, from_user_id, content, message_info, received_at) VALUES (?, 'acme', 'auto_dialog', ?, ?, ?, 'hi', ?, ?)",
  );
  let at = 0;
  const add = (conversation: string, role: string, from: string, info: Record<string, unknown>): void => {
    at += 1;
    msg.run(conversation, `m${at}`, role, from, JSON.stringify({ from_user_id: from, ...info }), at);
  };
  add('c_group', 'customer', 'wxid_nora', { group_id: 'R:1069605174', group_name: 'Printers', from_user_nickname: 'Nora' });
  add('c_group', 'customer', 'wxid_nora', { group_id: 'R:1069605174', group_name: 'Printer support', nickname: 'alias loses', from_user_nickname: '  Nora B.  ' });
  add('c_group', 'customer', 'wxid_sam', { group_id: 'R:1069605174' });
  // Staff write to Nora 1:1 and name her; a customer names the account they write to.
  add('c_nora', 'staff', 'agent7', { to_user_id: 'wxid_nora', to_user_nickname: 'Nora Bauer', from_user_nickname: 'Agent Kim' });
  add('c_li', 'customer', 'li', { nick_name: 'Li (alias)', to_user_id: 'acme-bot', to_user_nickname: 'Acme Support' });
  add('c_plain', 'customer', 'plain', {});
  // Not JSON, and a name of the wrong type: skipped, not fatal.
  msg.run('c_plain', 'm_bad', 'customer', 'plain', '{not json', 99);
  add('c_plain', 'customer', 'plain', { from_user_nickname: 42, group_name: '' });
  return db;
}

test('migration 21 keeps the latest name of each person and group sent before, read from the stored messages', () => {
  const db = storeOfVersion20();
  assert.equal(migrate(db, MIGRATIONS, 21), 21);
  const people = db.prepare('SELECT user_id, nickname FROM people ORDER BY user_id').all().map((r) => [r['user_id'], r['nickname']]);
  assert.deepEqual(people, [
    ['acme-bot', 'Acme Support'],
    ['agent7', 'Agent Kim'],
    ['li', 'Li (alias)'],
    // Her group line came first, the staff line naming her later: the latest wins.
    ['wxid_nora', 'Nora Bauer'],
  ]);
  const names = Object.fromEntries(
    db.prepare('SELECT id, customer_name, group_name FROM conversations').all().map((r) => [r['id'], [r['customer_name'], r['group_name']]]),
  );
  assert.deepEqual(names, {
    // The group's latest name; a group has no customer name (it held its last speaker's before).
    c_group: [null, 'Printer support'],
    c_nora: ['Nora Bauer', null],
    c_li: ['Li (alias)', null],
    c_plain: [null, null],
  });
});

test('migration 21: people rows are unique per client and user, and a name is required', () => {
  const db = storeOfVersion20();
  migrate(db, MIGRATIONS, 21);
  assert.throws(() => db.prepare("INSERT INTO people (client_id, user_id, nickname, updated_at) VALUES ('acme', 'li', 'again', 0)").run(), /UNIQUE|PRIMARY KEY/);
  assert.throws(() => db.prepare("INSERT INTO people (client_id, user_id, nickname, updated_at) VALUES ('acme', 'x', NULL, 0)").run(), /NOT NULL/);
});
