import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from './migrate.ts';
import { consoleQueries, messageSearch } from './console-queries.ts';

const CORPUS: Array<[string, string | null]> = [
  ['c1', '我想申请退款，订单号 A-1'],
  ['c1', 'Thanks!'],
  ['c2', 'Where is my PARCEL? 100% sure it shipped'],
  ['c3', 'Ünïcode Straße and ÉCOLE'],
  ['c3', null],
  ['c4', 'say "hello" OR NEAR(a b) AND NOT x*'],
  ['c5', '退货 and a_b\\c'],
  ['c6', 'Mixed CaSe 中文 English 混合'],
];

function seed(): DatabaseSync {
  const db = new DatabaseSync(':memory:');
  migrate(db);
  db.prepare("INSERT INTO clients (id, created_at, updated_at) VALUES ('a', 0, 0)").run();
  for (let i = 1; i <= 6; i++) {
    db.prepare("INSERT INTO conversations (id, client_id, channel, peer, customer_id, customer_name, created_at, last_message_at) VALUES (?, 'a', 'im', ?, ?, ?, 0, ?)").run(`c${i}`, `u:${i}`, `cust-${i}`, i === 2 ? 'Zoë' : null, i);
  }
  const message = db.prepare("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at) VALUES (?, 'a', 'auto_dialog', ?, 'customer', ?, '{}', 0)");
  CORPUS.forEach(([conversation, content], i) => message.run(conversation, `m${i}`, content));
  return db;
}

/** The search as it was before the index: every message, instr(lower()). */
function oldSearch(db: DatabaseSync, search: string): string[] {
  const pattern = `%${search.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
  return (db.prepare(
    `SELECT c.id FROM conversations c WHERE (c.customer_id LIKE ? ESCAPE '\\' OR c.customer_name LIKE ? ESCAPE '\\' OR c.group_id LIKE ? ESCAPE '\\'
       OR EXISTS (SELECT 1 FROM messages s WHERE s.conversation_id = c.id AND instr(lower(s.content), ?) > 0))
     ORDER BY c.last_message_at DESC, c.id`,
  ).all(pattern, pattern, pattern, search.toLowerCase()) as Array<{ id: string }>).map((r) => r.id);
}

const SEARCHES = [
  '申请退款', '退款', '退', 'parcel', 'PARCEL', 'Parcel?', '100%', '%', '_', 'a_b\\c', 'straße', 'STRASSE', 'école', 'École', 'ünï',
  '"hello"', '"', '""', 'OR NEAR(a b)', 'x*', 'NOT x', 'mixed case 中文', '中文 english', 'cust-', 'zoë', 'ZOË', 'cust-3', 'th', 'nothing at all',
];

test('message search on the trigram index finds exactly what the old scan found (Chinese, case, quotes, operators)', () => {
  const db = seed();
  const queries = consoleQueries(db, () => new Map());
  for (const search of SEARCHES) {
    const found = queries.conversations({ search, limit: 100, now: 0 }).map((c) => c.id);
    assert.deepEqual(found, oldSearch(db, search), `search ${JSON.stringify(search)}`);
  }
});

test('a search of 3+ characters reads the FTS index, a shorter one only the newest messages', () => {
  const db = seed();
  const plan = (search: string) => {
    const { sql, args } = messageSearch(search);
    return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
  };
  for (const search of ['parcel', '申请退款', 'say "hello" OR']) {
    assert.match(plan(search), /^SCAN f VIRTUAL TABLE INDEX \d+:M\d* \| SEARCH m USING INTEGER PRIMARY KEY \(rowid=\?\)$/, search);
  }
  assert.match(plan('退款'), /SEARCH messages USING INTEGER PRIMARY KEY \(rowid>\?\)/);
});
