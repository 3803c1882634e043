import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate, schemaVersion, type Migration } from './migrate.ts';
import { searchIndexQueries } from './search-index.ts';
import { MIGRATIONS } from './migrations/index.ts';

const tables = (db: DatabaseSync): string[] =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table') AND name NOT LIKE 'kb_fts_%' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);

/** Client 'a' and its IM conversation 'c', as the migrations under test know them. */
function aConversation(db: DatabaseSync): void {
  db.prepare("INSERT INTO clients (id, created_at, updated_at) VALUES ('a', 0, 0)").run();
  db.prepare("INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at) VALUES ('c', 'a', 'im', 'u:x', 0, 0)").run();
}

test('migrations are numbered 1..n without gaps', () => {
  assert.deepEqual(MIGRATIONS.map((m) => m.version), MIGRATIONS.map((_, i) => i + 1));
});

test('migration 1 creates the message service tables with their constraints', () => {
  const db = new DatabaseSync(':memory:');
  assert.equal(migrate(db, MIGRATIONS, 1), 1);
  assert.deepEqual(tables(db), ['client_secrets', 'clients', 'conversations', 'idempotency', 'messages', 'replies', 'request_log', 'settings']);
  aConversation(db);
  assert.throws(() => db.prepare("INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at) VALUES ('d', 'a', 'im', 'u:x', 0, 0)").run(), /UNIQUE/);
  assert.throws(() => db.prepare("INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at) VALUES ('e', 'a', 'sms', 'u:y', 0, 0)").run(), /CHECK/);
  assert.throws(() => db.prepare("UPDATE conversations SET auto_reply = 'maybe'").run(), /CHECK/);
});

test('migration 2 adds the knowledge base, its full-text index kept in sync by triggers', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 1);
  assert.equal(migrate(db, MIGRATIONS, 2), 2);
  const find = (q: string) => db.prepare('SELECT rowid FROM kb_fts WHERE kb_fts MATCH ?').all(q).length;
  db.prepare("INSERT INTO kb_entries (question, answer, created_at, updated_at) VALUES ('如何重置密码', 'reset it', 0, 0)").run();
  assert.equal(find('"重置密"'), 1);
  db.prepare("UPDATE kb_entries SET question = 'opening hours'").run();
  assert.equal(find('"重置密"'), 0);
  assert.equal(find('"hours"'), 1);
  db.prepare('DELETE FROM kb_entries').run();
  assert.equal(find('"hours"'), 0);
});

test('a failing migration rolls back and leaves the version where it was', () => {
  const db = new DatabaseSync(':memory:');
  const broken: Migration[] = [...MIGRATIONS, { version: MIGRATIONS.length + 1, name: 'broken', up: (d) => d.exec('CREATE TABLE x (a); CREATE TABLE x (a)') }];
  assert.throws(() => migrate(db, broken), new RegExp(`migration ${MIGRATIONS.length + 1} \\(broken\\) failed`));
  assert.equal(schemaVersion(db), MIGRATIONS.length);
  assert.ok(!tables(db).includes('x'));
});

test('a database from a newer build is refused, not written to', () => {
  const db = new DatabaseSync(':memory:');
  db.exec('PRAGMA user_version = 99');
  assert.throws(() => migrate(db), /newer than this build supports/);
});

test('migration 3 adds deliveries and attempts, and the reply trace columns', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 2);
  aConversation(db);
  db.prepare("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, message_info, received_at) VALUES ('c', 'a', 'auto_dialog', 'm1', 'customer', '{}', 0)").run();
  assert.equal(migrate(db, MIGRATIONS, 3), 3);
  const cols = (t: string) => (db.prepare(`PRAGMA table_info(${t})`).all() as Array<{ name: string }>).map((c) => c.name);
  assert.ok(cols('messages').includes('reply_outcome'), 'existing rows keep working with the new columns');
  assert.equal((db.prepare('SELECT reply_outcome FROM messages').get() as { reply_outcome: null }).reply_outcome, null);
  assert.ok(cols('replies').includes('cause'));
  assert.ok(tables(db).includes('deliveries') && tables(db).includes('delivery_attempts'));
  db.prepare("INSERT INTO replies (conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, created_at) VALUES ('c', 'auto', 'r1', '[]', 1, 'x', 0, 'kb', 0)").run();
  assert.throws(
    () => db.prepare("INSERT INTO deliveries (reply_id, reply_msg_id, conversation_id, client_id, send_url, message_info, state, next_attempt_at, created_at, updated_at) VALUES (1, 'r1', 'c', 'a', 'u', '{}', 'lost', 0, 0, 0)").run(),
    /CHECK/,
  );
});

test('migration 4 adds named engines with a sealed key column', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 3);
  assert.equal(migrate(db, MIGRATIONS, 4), 4);
  db.prepare("INSERT INTO engines (name, kind, config, api_key_sealed, created_at, updated_at) VALUES ('local', 'openai', '{}', NULL, 0, 0)").run();
  assert.throws(() => db.prepare("INSERT INTO engines (name, kind, config, created_at, updated_at) VALUES ('x', 'magic', '{}', 0, 0)").run(), /CHECK/);
});

test('migration 5 gives request log rows a count, a last time, an address and a unique counting key', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 4);
  const insert = "INSERT INTO request_log (at, request_id, method, path, status, latency_ms) VALUES (1, 'r1', 'POST', '/p', 401, 0.1)";
  db.prepare(insert).run();
  assert.equal(migrate(db, MIGRATIONS, 5), 5);
  const old = db.prepare('SELECT count, last_at, remote, agg_key FROM request_log').get() as Record<string, unknown>;
  assert.deepEqual({ ...old }, { count: 1, last_at: null, remote: null, agg_key: null }, 'an existing row stands for one request');
  const withKey = "INSERT INTO request_log (at, request_id, method, path, status, latency_ms, agg_key) VALUES (2, 'r2', 'POST', '/p', 401, 0.1, 'k')";
  db.prepare(withKey).run();
  assert.throws(() => db.prepare(withKey).run(), /UNIQUE/);
  db.prepare("INSERT INTO request_log (at, request_id, method, path, status, latency_ms) VALUES (3, 'r3', 'POST', '/p', 401, 0.1)").run();
  assert.throws(() => db.prepare('UPDATE request_log SET count = 0').run(), /CHECK/);
  const plan = (db.prepare("EXPLAIN QUERY PLAN UPDATE request_log SET count = count + 1 WHERE agg_key = 'k'").all() as Array<{ detail: string }>).map((r) => r.detail).join(' ');
  assert.match(plan, /request_log_agg/);
});

test('migration 6 rebuilds replies for operator replies (ids, rows and deliveries kept) and gives deliveries a kind', () => {
  const db = new DatabaseSync(':memory:');
  db.exec('PRAGMA foreign_keys = ON');
  migrate(db, MIGRATIONS, 5);
  aConversation(db);
  db.prepare("INSERT INTO replies (id, conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, created_at, cause) VALUES (7, 'c', 'auto', 'r1', '[\"m1\"]', 1, 'hi', 0, 'kb', 5, NULL)").run();
  db.prepare("INSERT INTO deliveries (reply_id, reply_msg_id, conversation_id, client_id, send_url, message_info, state, next_attempt_at, created_at, updated_at) VALUES (7, 'r1', 'c', 'a', 'u', '{}', 'pending', 0, 0, 0)").run();
  assert.equal(migrate(db, MIGRATIONS, 6), 6);
  assert.equal((db.prepare('PRAGMA foreign_keys').get() as { foreign_keys: number }).foreign_keys, 1, 'foreign keys are on again');
  const kept = db.prepare('SELECT id, kind, msg_id, content, operator, instruction FROM replies').get() as Record<string, unknown>;
  assert.deepEqual({ ...kept }, { id: 7, kind: 'auto', msg_id: 'r1', content: 'hi', operator: null, instruction: null });
  assert.equal((db.prepare('SELECT kind FROM deliveries').get() as { kind: string }).kind, 'auto', 'existing deliveries are auto replies');
  assert.deepEqual(db.prepare('PRAGMA foreign_key_check').all(), []);
  const reply = (kind: string, operator: string | null) =>
    db.prepare("INSERT INTO replies (conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, created_at, operator) VALUES ('c', ?, ?, '[]', 1, 'x', 0, 'operator', 0, ?)").run(kind, `r-${kind}-${String(operator)}`, operator);
  reply('operator', '{"id":"ann","name":"Ann"}');
  assert.throws(() => reply('operator', null), /CHECK/, 'an operator reply names its operator');
  assert.throws(() => reply('auto', '{"id":"ann","name":"Ann"}'), /CHECK/, 'only operator replies have one');
  assert.throws(() => db.prepare("UPDATE deliveries SET kind = 'robot'").run(), /CHECK/);
  assert.throws(() => db.prepare("INSERT INTO deliveries (reply_id, reply_msg_id, conversation_id, client_id, send_url, message_info, state, next_attempt_at, created_at, updated_at) VALUES (999, 'r9', 'c', 'a', 'u', '{}', 'pending', 0, 0, 0)").run(), /FOREIGN KEY/, 'deliveries still reference replies');
  const indexes = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'replies'").all() as Array<{ name: string }>).map((r) => r.name);
  assert.ok(indexes.includes('replies_conversation') && indexes.includes('replies_created'));
});

test('migration 6 refuses (and rolls back) a database whose deliveries point at missing replies', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 5);
  aConversation(db);
  db.exec('PRAGMA foreign_keys = OFF');
  db.prepare("INSERT INTO deliveries (reply_id, reply_msg_id, conversation_id, client_id, send_url, message_info, state, next_attempt_at, created_at, updated_at) VALUES (42, 'r', 'c', 'a', 'u', '{}', 'pending', 0, 0, 0)").run();
  db.exec('PRAGMA foreign_keys = ON');
  assert.throws(() => migrate(db, MIGRATIONS, 6), /migration 6 \(operator-replies\) failed: 1 rows would break a foreign key/);
  assert.equal(schemaVersion(db), 5);
});

test('migration 7 adds read markers, nicknames and the needs-human lifecycle, the audit, canned replies and filter indexes', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 6);
  db.prepare("INSERT INTO clients (id, created_at, updated_at) VALUES ('a', 0, 0)").run();
  db.prepare("INSERT INTO conversations (id, client_id, channel, peer, needs_human, created_at, last_message_at) VALUES ('c', 'a', 'im', 'u:x', 1, 0, 50)").run();
  db.prepare("INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at) VALUES ('d', 'a', 'im', 'u:y', 0, 0)").run();
  const message = db.prepare("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, message_info, received_at) VALUES (?, 'a', 'auto_dialog', ?, ?, ?, 0)");
  message.run('c', 'm1', 'customer', '{"nick_name":"Old name"}');
  message.run('c', 'm2', 'customer', '{"nickname":"  Alice  ","from_user_name":"alice.w"}');
  message.run('c', 'm3', 'staff', '{"nickname":"Agent Bob"}');
  message.run('d', 'm4', 'customer', 'not json');
  assert.equal(migrate(db, MIGRATIONS, 7), 7);
  const row = (id: string) => ({ ...(db.prepare('SELECT customer_name, last_read_message_id, unread, needs_human_since, resolved_at, resolved_by FROM conversations WHERE id = ?').get(id) as Record<string, unknown>) });
  assert.deepEqual(row('c'), { customer_name: 'Alice', last_read_message_id: 3, unread: 0, needs_human_since: 50, resolved_at: null, resolved_by: null }, 'history counts as read; the latest customer nickname');
  assert.deepEqual(row('d'), { customer_name: null, last_read_message_id: 4, unread: 0, needs_human_since: null, resolved_at: null, resolved_by: null });
  assert.throws(() => db.prepare("UPDATE conversations SET unread = -1 WHERE id = 'c'").run(), /CHECK/);
  db.prepare("INSERT INTO audit (at, operator_id, operator_name, action, conversation_id, detail) VALUES (1, 'ann', 'Ann', 'reply', 'c', '{}')").run();
  db.prepare("INSERT INTO audit (at, action) VALUES (1, 'retry')").run();
  assert.throws(() => db.prepare("INSERT INTO audit (at, action) VALUES (1, 'delete_everything')").run(), /CHECK/);
  db.prepare("INSERT INTO canned_replies (title, content, created_at, updated_at) VALUES ('Hi', 'Hello!', 0, 0)").run();
  const plan = (sql: string) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join(' ');
  assert.match(plan("SELECT * FROM conversations WHERE needs_human = 1 ORDER BY needs_human_since LIMIT 10"), /conversations_needs_human/);
  assert.match(plan("SELECT * FROM request_log WHERE request_id = 'x'"), /request_log_request/);
  assert.match(plan("SELECT * FROM request_log WHERE msg_id = 'x'"), /request_log_msg/);
  assert.match(plan("SELECT * FROM request_log WHERE client_id = 'x' ORDER BY id DESC LIMIT 5"), /request_log_client/);
  assert.match(plan("SELECT * FROM audit WHERE conversation_id = 'c' ORDER BY id DESC LIMIT 5"), /audit_conversation/);
  // The planner prefers deliveries_state on an empty table; the store names these (a partial index it cannot use would fail to prepare).
  assert.match(plan("SELECT * FROM deliveries INDEXED BY deliveries_dead WHERE state = 'dead' ORDER BY updated_at DESC LIMIT 5"), /deliveries_dead/);
  assert.match(plan("SELECT * FROM deliveries INDEXED BY deliveries_retrying WHERE state = 'pending' AND attempts > 0 ORDER BY updated_at DESC LIMIT 5"), /deliveries_retrying/);
});

test('migration 8 indexes deliveries by reply and pending replies in message order', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 7);
  aConversation(db);
  assert.equal(migrate(db, MIGRATIONS, 8), 8);
  const plan = (sql: string) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join(' ');
  assert.match(plan('SELECT id FROM deliveries WHERE reply_id = 1'), /deliveries_reply/);
  const pending = plan("SELECT id, content FROM messages INDEXED BY messages_pending_order WHERE reply_outcome = 'pending' ORDER BY id");
  assert.match(pending, /messages_pending_order/);
  assert.doesNotMatch(pending, /TEMP B-TREE/);
});

test('migration 9 indexes message text with trigrams, backfilled and kept in step with writes', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 7);
  aConversation(db);
  const message = db.prepare("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at) VALUES ('c', 'a', 'auto_dialog', ?, 'customer', ?, '{}', 0)");
  message.run('m1', '我想申请退款，订单号 A-1');
  message.run('m2', null);
  message.run('m3', 'Where is my PARCEL?');
  assert.equal(migrate(db, MIGRATIONS, 9), 9);
  const find = (q: string) => (db.prepare('SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid').all(q) as Array<{ rowid: number }>).map((r) => r.rowid);
  assert.deepEqual(find('"申请退款"'), [1], 'existing rows are backfilled');
  assert.deepEqual(find('"parcel"'), [3], 'case folded');
  message.run('m4', 'parcel arrived "late"');
  assert.deepEqual(find('"parcel"'), [3, 4], 'new rows are indexed by the trigger');
  assert.deepEqual(find('"d ""late"""'), [4], 'quotes are plain text inside an FTS5 string');
  db.prepare("UPDATE messages SET content = 'nothing here' WHERE id = 3").run();
  assert.deepEqual(find('"parcel"'), [4]);
  db.prepare('DELETE FROM messages WHERE id = 4').run();
  assert.deepEqual(find('"parcel"'), []);
  db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')");
});

test('migration 10 indexes auto_dialog messages by msg_id, so assist_dialog no longer needs the idempotency table', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 9);
  aConversation(db);
  const message = db.prepare("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at) VALUES ('c', 'a', ?, ?, 'customer', 'x', '{}', 0)");
  message.run('auto_dialog', 'm1');
  message.run('assist_dialog', 'm1');
  assert.equal(migrate(db, MIGRATIONS, 10), 10);
  const sql = "SELECT id FROM messages WHERE client_id = 'a' AND msg_id = 'm1' AND event_type = 'auto_dialog' ORDER BY id DESC LIMIT 1";
  const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join(' ');
  assert.match(plan, /messages_auto_msg_id/);
  assert.doesNotMatch(plan, /TEMP B-TREE/);
  assert.deepEqual(db.prepare(sql).all().map((r) => r['id']), [1], 'existing rows are indexed; other event types are not');
});

test('migration 11 indexes conversations in the console list order, so a page needs no sort', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 10);
  assert.equal(migrate(db, MIGRATIONS, 11), 11);
  const plan = (db.prepare('EXPLAIN QUERY PLAN SELECT id FROM conversations ORDER BY last_message_at DESC, id LIMIT 50').all() as Array<{ detail: string }>)
    .map((r) => r.detail).join(' ');
  assert.match(plan, /conversations_recent/);
  assert.doesNotMatch(plan, /TEMP B-TREE/);
});

test('migration 12 rolls up the dashboard counts per minute: existing rows backfilled, then kept by triggers on every write', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 11);
  const M = 60_000;
  const week = 7 * 24 * 60;
  const t = (week + 100) * M;
  aConversation(db);
  const log = db.prepare("INSERT INTO request_log (at, request_id, method, path, status, latency_ms, count) VALUES (?, 'q', 'POST', '/', ?, 1, ?)");
  const reply = db.prepare("INSERT INTO replies (conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, created_at, operator) VALUES ('c', ?, ?, '[]', 1, 'x', ?, 'kb', ?, ?)");
  const attempt = db.prepare("INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, outcome) VALUES (1, 1, ?, 1, ?)");
  log.run(t, 200, 1);
  log.run(t + 1, 429, 30);
  log.run(t + M, 500, 1);
  log.run(M, 200, 5); // more than a week before the newest row: not backfilled
  reply.run('auto', 'r1', 0, t, null);
  reply.run('auto', 'r2', 1, t, null);
  reply.run('operator', 'r3', 0, t, '{}');
  db.prepare("INSERT INTO deliveries (reply_id, reply_msg_id, conversation_id, client_id, send_url, message_info, state, next_attempt_at, created_at, updated_at) VALUES (1, 'r1', 'c', 'a', 'u', '{}', 'pending', 0, 0, 0)").run();
  attempt.run(t, 'retry');
  attempt.run(t, 'dead');
  attempt.run(t, 'sent');
  assert.equal(migrate(db, MIGRATIONS, 12), 12);
  const cells = () => Object.fromEntries((db.prepare('SELECT minute, metric, n FROM stats_minutes WHERE n != 0 ORDER BY minute, metric').all() as Array<{ minute: number; metric: string; n: number }>)
    .map((r) => [`${r.minute - t / M}:${r.metric}`, r.n]));
  assert.deepEqual(cells(), {
    '0:requests': 31, '0:rejected': 30, '0:replies': 1, '0:handoffs': 1, '0:delivery_failures': 2, '1:requests': 1, '1:rejected': 1,
  });
  assert.equal(migrate(db, MIGRATIONS), MIGRATIONS.length, 'a second run does nothing');
  assert.equal(cells()['0:requests'], 31, 'nothing counted twice');

  db.prepare('UPDATE request_log SET count = count + 4 WHERE status = 429').run();
  db.prepare("UPDATE request_log SET agg_key = 'k' WHERE status = 429").run();
  log.run(t + M, 401, 1);
  reply.run('auto', 'r4', 0, t + M, null);
  attempt.run(t + M, 'dead');
  attempt.run(t + M, 'cancelled');
  db.prepare("DELETE FROM request_log WHERE status = 200").run(); // pruning keeps the history
  assert.deepEqual(cells(), {
    '0:requests': 35, '0:rejected': 34, '0:replies': 1, '0:handoffs': 1, '0:delivery_failures': 2,
    '1:requests': 2, '1:rejected': 2, '1:replies': 1, '1:delivery_failures': 1,
  });
  // No writer moves a counted column today; if one does, the count moves with it.
  db.prepare("UPDATE request_log SET status = 200, at = at + 60000 WHERE status = 429").run();
  db.prepare("UPDATE replies SET handoff = 1 WHERE msg_id = 'r1'").run();
  db.prepare("UPDATE delivery_attempts SET outcome = 'sent' WHERE outcome = 'retry'").run();
  assert.deepEqual(cells(), {
    '0:requests': 1, '0:handoffs': 2, '0:delivery_failures': 1,
    '1:requests': 36, '1:rejected': 2, '1:replies': 1, '1:delivery_failures': 1,
  });
});

test('migration 13 indexes cancelled deliveries by when they were cancelled, for the console\'s Deliveries view', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 12);
  aConversation(db);
  const reply = db.prepare("INSERT INTO replies (id, conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, created_at) VALUES (?, 'c', 'auto', ?, '[]', 1, 'x', 0, 'kb', 0)");
  for (const id of [1, 2, 3]) reply.run(id, `r${id}`);
  const add = db.prepare("INSERT INTO deliveries (reply_id, reply_msg_id, conversation_id, client_id, send_url, message_info, state, next_attempt_at, created_at, updated_at) VALUES (?, ?, 'c', 'a', 'u', '{}', ?, 0, 0, ?)");
  add.run(1, 'r1', 'cancelled', 5);
  add.run(2, 'r2', 'sent', 9);
  add.run(3, 'r3', 'cancelled', 7);
  assert.equal(migrate(db, MIGRATIONS, 13), 13);
  // Named, as the store names it: without statistics the planner would take deliveries_state and sort.
  const sql = "SELECT reply_msg_id FROM deliveries INDEXED BY deliveries_cancelled WHERE state = 'cancelled' ORDER BY updated_at DESC LIMIT 10";
  const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join(' ');
  assert.match(plan, /deliveries_cancelled/);
  assert.doesNotMatch(plan, /TEMP B-TREE/);
  assert.deepEqual((db.prepare(sql).all() as Array<{ reply_msg_id: string }>).map((r) => r.reply_msg_id), ['r3', 'r1']);
});

test('migration 14 queues new messages for the search index: what was indexed stays found, a flush indexes the queue, and deletes and updates of queued or indexed rows keep the index sound', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 13);
  aConversation(db);
  const message = db.prepare("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at) VALUES ('c', 'a', 'auto_dialog', ?, 'customer', ?, '{}', 0)");
  message.run('m1', 'parcel one');
  message.run('m2', 'parcel two');
  assert.equal(migrate(db, MIGRATIONS, 14), 14);
  const index = searchIndexQueries(db);
  const find = (q: string) => (db.prepare('SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid').all(q) as Array<{ rowid: number }>).map((r) => r.rowid);
  assert.deepEqual(find('"parcel"'), [1, 2], 'rows indexed before the migration stay indexed');
  message.run('m3', 'parcel three');
  message.run('m4', null);
  message.run('m5', 'parcel five');
  message.run('m6', 'parcel six');
  assert.deepEqual(find('"parcel"'), [1, 2], 'new rows wait in the queue');
  assert.equal(index.queued(), 3, 'a message without text is not queued');
  // Queued rows: a delete only leaves the queue (FTS5 never saw it); an update is indexed with its new text.
  db.prepare('DELETE FROM messages WHERE id = 5').run();
  db.prepare("UPDATE messages SET content = 'box three' WHERE id = 3").run();
  // Indexed rows: as before.
  db.prepare('DELETE FROM messages WHERE id = 1').run();
  db.prepare("UPDATE messages SET content = 'box two' WHERE id = 2").run();
  db.prepare("UPDATE messages SET content = NULL WHERE id = 6").run();
  assert.equal(index.flushQueue(), 2);
  assert.equal(index.queued(), 0);
  assert.deepEqual(find('"parcel"'), []);
  assert.deepEqual(find('"box"'), [2, 3]);
  db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')");
});

test('migration 14 repairs a store whose search insert trigger was lost (an older bulk loader killed midway): the messages stored since are found', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 13);
  aConversation(db);
  const message = db.prepare("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at) VALUES ('c', 'a', 'auto_dialog', ?, 'customer', ?, '{}', 0)");
  message.run('m1', 'parcel one');
  db.exec('DROP TRIGGER messages_fts_insert');
  message.run('m2', 'parcel two');
  assert.equal(migrate(db, MIGRATIONS, 14), 14);
  const find = (q: string) => (db.prepare('SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid').all(q) as Array<{ rowid: number }>).map((r) => r.rowid);
  assert.deepEqual(find('"parcel"'), [1, 2]);
  message.run('m3', 'parcel three');
  searchIndexQueries(db).flushQueue();
  assert.deepEqual(find('"parcel"'), [1, 2, 3]);
  db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')");
});

test('migration 15 lets the audit record a flag by hand, keeping its rows, ids and index', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 14);
  const insert = db.prepare("INSERT INTO audit (id, at, operator_id, operator_name, action, conversation_id, detail) VALUES (?, 5, 'u1', 'Ann Lee', ?, 'c', NULL)");
  insert.run(7, 'resolve');
  assert.throws(() => insert.run(8, 'flag'), /CHECK/);
  assert.equal(migrate(db, MIGRATIONS, 15), 15);
  insert.run(8, 'flag');
  assert.throws(() => insert.run(9, 'maybe'), /CHECK/);
  assert.deepEqual(
    db.prepare('SELECT id, action, operator_name FROM audit ORDER BY id').all().map((r) => ({ ...r })),
    [{ id: 7, action: 'resolve', operator_name: 'Ann Lee' }, { id: 8, action: 'flag', operator_name: 'Ann Lee' }],
  );
  assert.ok(db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'audit_conversation'").get());
});

test('migration 16 lets the audit record a cancelled delivery, keeping its rows, ids and index', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 15);
  const insert = db.prepare("INSERT INTO audit (id, at, operator_id, operator_name, action, conversation_id, detail) VALUES (?, 5, 'u1', 'Ann Lee', ?, 'c', NULL)");
  insert.run(7, 'flag');
  insert.run(8, 'retry');
  assert.throws(() => insert.run(9, 'cancel'), /CHECK/);
  assert.equal(migrate(db, MIGRATIONS, 16), 16);
  insert.run(9, 'cancel');
  assert.throws(() => insert.run(10, 'maybe'), /CHECK/);
  assert.deepEqual(
    db.prepare('SELECT id, action FROM audit ORDER BY id').all().map((r) => ({ ...r })),
    [{ id: 7, action: 'flag' }, { id: 8, action: 'retry' }, { id: 9, action: 'cancel' }],
  );
  assert.ok(db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'audit_conversation'").get());
});

test('migration 17 records why a conversation needs a human: one of the known reasons, none for those flagged before', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 16);
  aConversation(db);
  db.prepare("UPDATE conversations SET needs_human = 1, needs_human_since = 5 WHERE id = 'c'").run();
  assert.equal(migrate(db, MIGRATIONS, 17), 17);
  assert.deepEqual({ ...db.prepare("SELECT needs_human, needs_human_reason FROM conversations WHERE id = 'c'").get() }, { needs_human: 1, needs_human_reason: null });
  for (const reason of ['handoff', 'no_answer', 'delivery_failed', 'flagged', 'customer_waiting']) db.prepare('UPDATE conversations SET needs_human_reason = ?').run(reason);
  assert.throws(() => db.prepare("UPDATE conversations SET needs_human_reason = 'bored'").run(), /CHECK/);
});

test('migration 18 indexes the conversations whose bot is held off and that are not in Needs you, for the staff-wait watch at start', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 17);
  aConversation(db);
  db.prepare("UPDATE conversations SET auto_reply = 'stopped' WHERE id = 'c'").run();
  assert.equal(migrate(db, MIGRATIONS, 18), 18);
  const held = "SELECT id FROM conversations WHERE auto_reply != 'active' AND needs_human = 0";
  const plan = (db.prepare(`EXPLAIN QUERY PLAN ${held}`).all() as Array<{ detail: string }>).map((r) => r.detail);
  assert.match(plan.join('\n'), /^SCAN conversations USING (COVERING )?INDEX conversations_held$/);
  assert.deepEqual(db.prepare(held).all().map((r) => r['id']), ['c']);
  db.prepare("UPDATE conversations SET needs_human = 1 WHERE id = 'c'").run();
  assert.deepEqual(db.prepare(held).all(), [], 'in Needs you: left out');
});

test('migration 19 indexes held conversations by their last message, and the lines that answer a customer or end a wait', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 18);
  aConversation(db);
  db.prepare("UPDATE conversations SET auto_reply = 'stopped' WHERE id = 'c'").run();
  assert.equal(migrate(db, MIGRATIONS, 19), 19);
  const plan = (sql: string) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
  const held = "SELECT id FROM conversations WHERE auto_reply != 'active' AND needs_human = 0 AND last_message_at >= ?";
  assert.match(plan(held), /USING INDEX conversations_held \(last_message_at>\?\)/);
  assert.deepEqual(db.prepare(held).all(0).map((r) => r['id']), ['c'], 'a conversation stopped before the migration is in it');
  const answers = "SELECT id FROM messages WHERE conversation_id = ? AND (role IN ('staff', 'ai') OR (role = 'command' AND content = 'resume_auto_reply')) ORDER BY id DESC LIMIT 1";
  assert.match(plan(answers), /messages_answer_lines/);
});

test('migration 20 turns FTS5\'s automerge off for message search: the search queue\'s flush merges in steps instead', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 19);
  const automerge = () => (db.prepare("SELECT v FROM messages_fts_config WHERE k = 'automerge'").get() as { v: number } | undefined)?.v;
  assert.equal(automerge(), undefined, 'FTS5 default (4)');
  assert.equal(migrate(db, MIGRATIONS, 20), 20);
  assert.equal(automerge(), 0);
  // The index still takes and finds messages after the change.
  aConversation(db);
  db.prepare("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at) VALUES ('c', 'a', 'auto_dialog', 'm1', 'customer', 'where is my parcel', '{}', 0)").run();
  searchIndexQueries(db).flushQueue();
  assert.equal((db.prepare('SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH ?').get('"parcel"') as { n: number }).n, 1);
});
