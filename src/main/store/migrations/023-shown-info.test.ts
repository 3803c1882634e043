import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from '../migrate.ts';
import { MIGRATIONS } from './index.ts';
import { createStore } from '../index.ts';

test('migration 23 gives the large stored messages their `shown`, leaves the small ones to the read, and both read the same', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 21);
  db.prepare("INSERT INTO clients (id, created_at, updated_at) VALUES ('acme', 0, 0)").run();
  db.prepare("INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at) VALUES ('c', 'acme', 'im', 'u:x', 0, 0)").run();
  const insert = db.prepare(
    "INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, from_user_id, content, message_info, received_at) VALUES ('c', 'acme', 'auto_dialog', ?, 'customer', 'x', 'hi', ?, ?)",
  );
  const info = { event_type: 'auto_dialog', from_user_id: 'x', nick_name: 'Xu', message_type: 2, quote: { msg_id: 'q', message_type: 1, content: 'that one' } };
  insert.run('small', JSON.stringify(info), 1);
  insert.run('large', JSON.stringify({ ...info, trace: 't'.repeat(70_000) }), 2);
  insert.run('broken', '{not json', 3);
  migrate(db);
  const shown = Object.fromEntries((db.prepare('SELECT msg_id, shown FROM messages').all() as Array<{ msg_id: string; shown: string | null }>).map((r) => [r.msg_id, r.shown]));
  assert.equal(shown['small'], null);
  assert.equal(shown['broken'], null);
  assert.deepEqual(
    [JSON.parse(shown['large']!).name, JSON.parse(shown['large']!).quoted_id, JSON.parse(shown['large']!).quote.content],
    ['Xu', 'q', 'that one'],
  );
  const entries = createStore(db).console.transcript('c', 10);
  const view = (msgId: string) => entries.find((e) => e.msgId === msgId)!;
  assert.deepEqual(view('large').messageInfo, view('small').messageInfo);
  assert.deepEqual([view('large').speakerName, view('small').speakerName, view('broken').speakerName], ['Xu', 'Xu', null]);
  assert.deepEqual(view('broken').messageInfo, {}, 'a row that is not JSON shows nothing of it, and fails nothing');
});
