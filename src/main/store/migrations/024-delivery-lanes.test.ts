import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from '../migrate.ts';
import { MIGRATIONS } from './index.ts';

/** A store as version 23 left it: deliveries in every state, to several receivers. */
function storeOfVersion23(): DatabaseSync {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 23);
  db.prepare("INSERT INTO clients (id, created_at, updated_at) VALUES ('acme', 0, 0)").run();
  db.prepare("INSERT INTO conversations (id, client_id, channel, peer, customer_id, created_at, last_message_at) VALUES ('c', 'acme', 'im', 'u:c', 'c', 0, 0)").run();
  const reply = db.prepare("INSERT INTO replies (conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, created_at) VALUES ('c', 'auto', ?, '[]', 0, 'x', 0, 'kb', 0)");
  const delivery = db.prepare(
    "INSERT INTO deliveries (reply_id, reply_msg_id, conversation_id, client_id, send_url, message_info, state, next_attempt_at, created_at, updated_at) VALUES (?, ?, 'c', 'acme', ?, '{}', ?, ?, 0, 0)",
  );
  const rows: Array<[string, string]> = [
    ['https://Hooks.Example.com/in?x=1', 'pending'],
    ['http://127.0.0.1:8080/a', 'pending'],
    ['https://hooks.example.com:443/b', 'dead'],
    ['http://10.0.0.5/c', 'cancelled'],
    ['http://sent.example.com/d', 'sent'],
  ];
  for (const [i, [url, state]] of rows.entries()) {
    const id = Number(reply.run(`r${i}`).lastInsertRowid);
    delivery.run(id, `r${i}`, url, state, i);
  }
  return db;
}

test('migration 24 gives every delivery that may still be sent its origin, and indexes the pending ones by client and origin', () => {
  const db = storeOfVersion23();
  assert.equal(migrate(db, MIGRATIONS, 24), 24);
  const origins = db.prepare('SELECT state, origin FROM deliveries ORDER BY id').all().map((r) => [r['state'], r['origin']]);
  assert.deepEqual(origins, [
    ['pending', 'https://hooks.example.com:443'],
    ['pending', 'http://127.0.0.1:8080'],
    ['dead', 'https://hooks.example.com:443'],
    ['cancelled', 'http://10.0.0.5:80'],
    // Never pending again: left as it was, without the cost of a rewrite.
    ['sent', ''],
  ]);
  const plan = db.prepare("EXPLAIN QUERY PLAN SELECT id FROM deliveries INDEXED BY deliveries_lane WHERE state = 'pending' AND client_id = 'acme' AND origin = 'x' ORDER BY next_attempt_at").all();
  assert.ok(plan.some((r) => String(r['detail']).includes('deliveries_lane')), JSON.stringify(plan));
  assert.equal(db.prepare("SELECT count(*) AS n FROM deliveries INDEXED BY deliveries_lane WHERE state = 'pending'").get()!['n'], 2);
});
