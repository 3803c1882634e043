import type { DatabaseSync } from 'node:sqlite';

// Test and bench data for message search at scale (test/read-worker.test.ts, bench/search-stall.ts);
// not imported by the app.

/**
 * Appends messages `from`..`from+count-1` to conversations s0..s{conversations-1} (created when
 * `from` is 0) in one transaction on a migrated database. The search index is filled with FTS5's
 * own bulk path ('rebuild') instead of its insert trigger, which is dropped and put back in the same
 * transaction: 10-20 times faster for hundreds of thousands of rows, and the same index.
 */
export function bulkMessages(db: DatabaseSync, from: number, count: number, conversations: number, text: (i: number) => string): void {
  const trigger = (db.prepare("SELECT sql FROM sqlite_master WHERE name = 'messages_fts_enqueue'").get() as { sql: string }).sql;
  db.exec('PRAGMA cache_size = -262144');
  db.exec('BEGIN');
  if (from === 0) {
    db.exec("INSERT OR IGNORE INTO clients (id, created_at, updated_at) VALUES ('seed', 0, 0)");
    const conv = db.prepare("INSERT INTO conversations (id, client_id, channel, peer, customer_id, created_at, last_message_at) VALUES (?, 'seed', 'im', ?, ?, 0, ?)");
    for (let c = 0; c < conversations; c++) conv.run(`s${c}`, `u:${c}`, `cust-${c}`, c);
  }
  db.exec('DROP TRIGGER messages_fts_enqueue');
  const msg = db.prepare("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at) VALUES (?, 'seed', 'auto_dialog', ?, 'customer', ?, '{}', ?)");
  for (let i = from; i < from + count; i++) msg.run(`s${i % conversations}`, `s${i}`, text(i), i);
  // 'rebuild' indexes every message, those still queued too: they leave the queue, or the delete
  // trigger would take them for never indexed and leave their terms in the index.
  db.exec(`INSERT INTO messages_fts (messages_fts) VALUES ('rebuild'); DELETE FROM messages_fts_queue; ${trigger}; COMMIT`);
}
