import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from './migrate.ts';
import { consoleQueries } from './console-queries.ts';
import { searchIndexQueries } from './search-index.ts';
import { consoleInputs } from '../../shared/console-api.ts';

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
  searchIndexQueries(db).flushQueue();
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

/** The order a search lists: conversations whose own fields match first (list order), then the newest matching message first. */
function expectedOrder(db: DatabaseSync, search: string, found: string[]): string[] {
  const pattern = `%${search.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
  const byField = (db.prepare(
    `SELECT id FROM conversations c WHERE c.customer_id LIKE ? ESCAPE '\\' OR c.customer_name LIKE ? ESCAPE '\\' OR c.group_id LIKE ? ESCAPE '\\' ORDER BY last_message_at DESC, id`,
  ).all(pattern, pattern, pattern) as Array<{ id: string }>).map((r) => r.id);
  const newest = (id: string) => (db.prepare('SELECT max(id) AS m FROM messages WHERE conversation_id = ? AND instr(lower(content), ?) > 0').get(id, search.toLowerCase()) as { m: number }).m;
  const rest = found.filter((id) => !byField.includes(id)).sort((a, b) => newest(b) - newest(a));
  return [...byField.filter((id) => found.includes(id)), ...rest];
}

test('message search on the trigram index finds exactly what the old scan found (Chinese, case, quotes, operators), over pages', () => {
  const db = seed();
  const queries = consoleQueries(db, () => new Map());
  for (const search of SEARCHES) {
    for (const limit of [1, 2, 100]) {
      const found: string[] = [];
      let cursor: string | undefined;
      do {
        const page = queries.conversations({ ...consoleInputs.listConversations.parse({ search, limit, cursor }), now: 0 });
        found.push(...page.items.map((c) => c.id));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      const old = oldSearch(db, search);
      assert.deepEqual([...found].sort(), [...old].sort(), `search ${JSON.stringify(search)} limit ${limit}`);
      assert.deepEqual(found, expectedOrder(db, search, old), `order of search ${JSON.stringify(search)} limit ${limit}`);
    }
  }
});

test('a search page walks the messages newest first and stops: the FTS index for 3+ characters, the newest messages for fewer, no sort', () => {
  const db = seed();
  const statements: string[] = [];
  const prepare = db.prepare.bind(db);
  const spy = new Proxy(db, { get: (t, k) => (k === 'prepare' ? (sql: string) => (statements.push(sql), prepare(sql)) : Reflect.get(t, k, t) as unknown) });
  const queries = consoleQueries(spy, () => new Map());
  const plan = (search: string) => {
    statements.length = 0;
    queries.conversations({ search, limit: 10, now: 0 });
    const sql = statements.find((s) => /AS match_id/.test(s));
    assert.ok(sql, `the message walk ran for ${search}`);
    return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
  };
  for (const search of ['parcel', '申请退款', 'say "hello" OR']) {
    const p = plan(search);
    assert.match(p, /^SCAN f VIRTUAL TABLE INDEX \d+:M[^|]* \| SEARCH m USING INTEGER PRIMARY KEY \(rowid=\?\) \|/, search);
    assert.match(p, /SEARCH c USING INDEX sqlite_autoindex_conversations_1 \(id=\?\)/, search);
    assert.match(p, /SEARCH n USING INDEX messages_conversation \(conversation_id=\? AND id>\?\)/, 'the newer-match check reads only newer messages of that conversation');
    assert.doesNotMatch(p, /TEMP B-TREE|SCAN (m|c|n)\b/, search);
  }
  const short = plan('退款');
  assert.match(short, /SEARCH m USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/);
  assert.doesNotMatch(short, /TEMP B-TREE/);
});
