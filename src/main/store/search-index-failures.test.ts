import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { openDatabase } from './db.ts';
import { migrate } from './migrate.ts';
import { createStore, type Store } from './index.ts';
import { createWriteQueue } from './write-queue.ts';
import { MIGRATIONS } from './migrations/index.ts';
import { bulkMessages } from './bulk-messages.fixture.ts';
import { searchIndexQueries } from './search-index.ts';

// Attacks on migration 14's queued search index: failures, rowid reuse, bulk paths, plans.

function setup() {
  const path = join(mkdtempSync(join(tmpdir(), 'sb-fts-attack-')), 's.db');
  const store = createStore(openDatabase(path));
  store.connection.prepare("INSERT INTO clients (id, created_at, updated_at) VALUES ('a', 0, 0)").run();
  store.connection.prepare("INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at) VALUES ('c', 'a', 'im', 'u:x', 0, 0)").run();
  const errors: string[] = [];
  const queue = createWriteQueue(store.connection, (e) => errors.push((e as Error).message), { now: () => 0, beforeCommit: () => void store.searchIndex.flushQueue() });
  return { store, queue, errors, path };
}

let seq = 0;
const add = (store: Store, content: string | null): number =>
  store.messages.insert({
    conversationId: 'c', clientId: 'a', eventType: 'auto_dialog', msgId: `m${++seq}`, role: 'customer', fromUserId: 'x', fromUserType: 2, content,
    messageInfo: '{}', createTimestamp: null, receivedAt: seq, replyScheduled: null, replyReason: null,
  });

const find = (db: DatabaseSync, q: string): number[] =>
  (db.prepare('SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid').all(`"${q}"`) as Array<{ rowid: number }>).map((r) => r.rowid);
const queued = (db: DatabaseSync): number[] => (db.prepare('SELECT id FROM messages_fts_queue ORDER BY id').all() as Array<{ id: number }>).map((r) => r.id);
const sound = (db: DatabaseSync): void => void db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')");

test('a job that throws after storing a message leaves nothing queued and nothing searchable; its neighbours are found', async () => {
  const { store, queue, errors } = setup();
  const outcomes = await Promise.allSettled([
    queue.run(() => add(store, 'parcel kept one')),
    queue.run(() => {
      add(store, 'parcel thrown');
      throw new Error('job failed');
    }),
    queue.run(() => add(store, 'parcel kept two')),
  ]);
  assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
  assert.equal(find(store.connection, 'parcel').length, 2);
  assert.deepEqual(find(store.connection, 'thrown'), []);
  assert.deepEqual(queued(store.connection), []);
  assert.deepEqual(errors, []);
  sound(store.connection);
});

test('a COMMIT that fails (deferred foreign key) rolls back messages, queue and index together; the next batch indexes normally', async () => {
  const { store, queue } = setup();
  await queue.run(() => add(store, 'before alpha'));
  const outcomes = await Promise.allSettled([
    queue.run(() => add(store, 'doomed parcel')),
    queue.run(() => {
      // Checked only at COMMIT: the whole group transaction fails there, after the flush ran.
      store.connection.exec('PRAGMA defer_foreign_keys = ON');
      store.connection.prepare("INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at) VALUES ('bad', 'no-such-client', 'im', 'u:y', 0, 0)").run();
    }),
  ]);
  assert.deepEqual(outcomes.map((o) => o.status), ['rejected', 'rejected']);
  assert.deepEqual(find(store.connection, 'doomed'), [], 'nothing searchable that was not committed');
  assert.equal((store.connection.prepare("SELECT count(*) AS n FROM messages WHERE content = 'doomed parcel'").get() as { n: number }).n, 0);
  assert.deepEqual(queued(store.connection), []);
  sound(store.connection);
  const id = await queue.run(() => add(store, 'after parcel'));
  assert.deepEqual(find(store.connection, 'parcel'), [id]);
  assert.equal(find(store.connection, 'alpha').length, 1);
  sound(store.connection);
});

test('disk full while indexing (max_page_count: the messages fit, their index segment does not): fail-safe, every job of the batch is refused and nothing is stored; the next batch indexes normally', async () => {
  // FTS5 buffers the flush's rows in memory and writes its segment at RELEASE before_commit, and
  // SQLITE_FULL there makes SQLite roll back the whole transaction: the write queue sees that the
  // transaction is gone and fails the batch as one, so nothing is acknowledged that was not stored.
  const { store, queue, errors } = setup();
  const db = store.connection;
  await queue.run(() => add(store, 'warm up'));
  const pages = (db.prepare('PRAGMA page_count').get() as { page_count: number }).page_count;
  const text = (i: number) => `${'parcel '.repeat(5)}${Array.from({ length: 400 }, (_, k) => String.fromCharCode(0x4e00 + ((i * 401 + k * 7) % 20000))).join('')}`;
  db.exec(`PRAGMA max_page_count = ${pages + 10}`);
  const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => queue.run(() => add(store, text(i)))));
  db.exec('PRAGMA max_page_count = 1073741823');
  assert.ok(outcomes.every((o) => o.status === 'rejected' && /full/.test((o.reason as Error).message)), 'every job refused with the disk-full error');
  assert.deepEqual(errors, [], 'not reported as a background indexing failure: the jobs themselves failed');
  assert.equal((db.prepare('SELECT count(*) AS n FROM messages').get() as { n: number }).n, 1, 'nothing stored');
  assert.deepEqual(queued(db), []);
  const id = await queue.run(() => add(store, text(99)));
  assert.deepEqual(find(db, 'parcel'), [id]);
  sound(db);
});

test('rowid reuse: deleting the newest message (indexed or still queued) and storing another under the same id finds only the new text', async () => {
  const { store, queue } = setup();
  const db = store.connection;
  const [, second] = await Promise.all([queue.run(() => add(store, 'alpha one')), queue.run(() => add(store, 'alpha two'))]);
  // Indexed, max row deleted, its id reused in a later transaction.
  await queue.run(() => db.prepare('DELETE FROM messages WHERE id = ?').run(second!));
  const reused = await queue.run(() => add(store, 'bravo two'));
  assert.equal(reused, second, 'SQLite reuses the id of a deleted max row');
  assert.deepEqual(find(db, 'alpha'), [1]);
  assert.deepEqual(find(db, 'bravo'), [reused]);
  sound(db);
  // Same transaction: stored, deleted while queued, id reused, all before the flush.
  const ids = await queue.run(() => {
    const a = add(store, 'charlie');
    db.prepare('DELETE FROM messages WHERE id = ?').run(a);
    const b = add(store, 'delta');
    return [a, b];
  });
  assert.equal(ids[0], ids[1]);
  assert.deepEqual(find(db, 'charlie'), []);
  assert.deepEqual(find(db, 'delta'), [ids[1]]);
  // Indexed row deleted and id reused in the same transaction as the delete.
  const e = await queue.run(() => {
    db.prepare('DELETE FROM messages WHERE id = ?').run(ids[1]!);
    return add(store, 'echo');
  });
  assert.equal(e, ids[1]);
  assert.deepEqual(find(db, 'delta'), []);
  assert.deepEqual(find(db, 'echo'), [e]);
  // Updates of a queued row inside a job that then throws: the row is rolled back to indexed.
  await Promise.allSettled([queue.run(() => {
    db.prepare("UPDATE messages SET content = 'foxtrot' WHERE id = ?").run(e);
    throw new Error('no');
  })]);
  assert.deepEqual(find(db, 'echo'), [e]);
  assert.deepEqual(find(db, 'foxtrot'), []);
  assert.deepEqual(queued(db), []);
  sound(db);
});

test('bulkMessages (rebuild) on a store with a message still queued leaves no stale queue row: that message can then be deleted without a stale index entry', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS);
  bulkMessages(db, 0, 10, 2, (i) => `seed ${i}`);
  const message = db.prepare("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at) VALUES ('s0', 'seed', 'auto_dialog', ?, 'customer', ?, '{}', 0)");
  const golf = Number(message.run('q1', 'golf queued').lastInsertRowid);
  assert.equal(queued(db).length, 1);
  bulkMessages(db, 10, 10, 2, (i) => `seed ${i}`);
  assert.deepEqual(find(db, 'golf'), [golf], "'rebuild' indexed the queued message");
  assert.deepEqual(queued(db), [], 'and nothing is left queued for it');
  // Were it still queued, the delete trigger would skip FTS5's delete and leave its terms behind.
  db.prepare('DELETE FROM messages WHERE id = ?').run(golf);
  searchIndexQueries(db).flushQueue();
  assert.deepEqual(find(db, 'golf'), []);
  sound(db);
});

test("the flush's plan reads the queue and fetches each message by id, with statistics that call the queue huge and messages tiny, and without any", () => {
  const { store } = setup();
  const db = store.connection;
  const flush = 'INSERT INTO messages_fts (rowid, content) SELECT q.id, m.content FROM messages_fts_queue q CROSS JOIN messages m ON m.id = q.id WHERE m.content IS NOT NULL';
  const plan = () => (db.prepare(`EXPLAIN QUERY PLAN ${flush}`).all() as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
  db.exec('DROP TABLE IF EXISTS sqlite_stat1');
  assert.match(plan(), /^SCAN q \| SEARCH m USING INTEGER PRIMARY KEY/);
  db.exec('ANALYZE');
  db.exec("DELETE FROM sqlite_stat1 WHERE tbl IN ('messages', 'messages_fts_queue')");
  db.exec("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES ('messages_fts_queue', NULL, '5000000'), ('messages', NULL, '3'), ('messages', 'messages_conversation', '3 3 1')");
  db.exec('ANALYZE sqlite_schema');
  // A Bloom filter on messages appears only when they are estimated fewer than the queued ids (here 3 against 5,000,000).
  assert.match(plan(), /^SCAN q \|( BLOOM FILTER ON m \(id=\?\) \|)? SEARCH m USING INTEGER PRIMARY KEY/);
  // The triggers' lookups of the queue are by primary key, whatever the statistics.
  const check = (db.prepare('EXPLAIN QUERY PLAN SELECT 1 FROM messages_fts_queue WHERE id = ?').all() as Array<{ detail: string }>).map((r) => r.detail).join();
  assert.match(check, /SEARCH messages_fts_queue USING INTEGER PRIMARY KEY/);
});
