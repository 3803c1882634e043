import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { consoleQueries } from './console-queries.ts';
import { searchIndexQueries } from './search-index.ts';
import { FILTERS, oldList, seedList } from './console-list.fixture.ts';
import { consoleInputs, type ConversationSummary } from '../../shared/console-api.ts';
import { decodeCursor, encodeCursor } from '../../shared/list-cursor.ts';
import { excerpt, type ConversationFilter } from './console-list.ts';

type Queries = ReturnType<typeof consoleQueries>;

/** Every page, following nextCursor as a client does (through the real input schema), concatenated. */
function allPages(queries: Queries, f: Omit<ConversationFilter, 'limit' | 'cursor'>, limit: number, between?: (page: number) => void): ConversationSummary[] {
  const out: ConversationSummary[] = [];
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    const input = consoleInputs.listConversations.parse({ ...f, limit, cursor });
    const r = queries.conversations({ ...input, now: f.now });
    assert.ok(r.items.length <= limit);
    out.push(...r.items);
    if (r.nextCursor === null) return out;
    assert.ok(r.items.length > 0, 'a page with a next cursor is not empty');
    assert.ok(page < 10_000, 'the pages end');
    cursor = r.nextCursor;
    between?.(page);
  }
}

const sortedIds = (rows: Array<{ id: string }>): string[] => rows.map((r) => r.id).sort();

test('pages concatenate to exactly the old full list, in order, for every filter (ties on last_message_at included)', () => {
  const db = new DatabaseSync(':memory:');
  seedList(db, 3000, 4); // three conversations share each last_message_at
  const queries = consoleQueries(db, () => new Map());
  const now = 1000;
  for (const { limit: _limit, ...f } of FILTERS) {
    const expected = (oldList(db, { ...f, limit: 1_000_000, now }) as Array<{ id: string; last_text: string | null }>).map((r) => [r.id, r.last_text]);
    assert.ok(expected.length > 0 || f.clientId === 'nobody', `filter ${JSON.stringify(f)} finds rows`);
    // Page sizes around the ties (1), odd (7, 61) and the maximum; one-row pages only on short lists, for time.
    for (const limit of expected.length > 400 ? [61, 200] : [1, 7, 200]) {
      const pages = allPages(queries, { ...f, now }, limit);
      if (f.search) {
        // A search lists field matches, then message matches newest match first: the same set, once each.
        assert.deepEqual(sortedIds(pages), expected.map(([id]) => id as string).sort(), `filter ${JSON.stringify(f)} limit ${limit}`);
        assert.equal(new Set(pages.map((p) => p.id)).size, pages.length, 'no conversation twice');
      } else {
        assert.deepEqual(pages.map((r) => [r.id, r.lastText]), expected, `filter ${JSON.stringify(f)} limit ${limit}`);
      }
    }
  }
});

test('a search lists conversations whose own fields match first (list order), then by newest matching message', () => {
  const db = new DatabaseSync(':memory:');
  seedList(db, 300, 3);
  const queries = consoleQueries(db, () => new Map());
  // 'c1' is in customer ids cust-1, cust-10.. and in no message text ("order 1 note"...): field matches only.
  const byField = allPages(queries, { search: 'cust-1', now: 0 }, 5).map((c) => c.id);
  assert.deepEqual(byField, (oldList(db, { search: 'cust-1', limit: 1000, now: 0 }) as Array<{ id: string }>).map((r) => r.id));
  // 'refund' is in message text only (every 13th conversation), newest match first.
  const byText = allPages(queries, { search: 'refund', now: 0 }, 4);
  const newestMatch = (id: string) => (db.prepare("SELECT max(id) AS m FROM messages WHERE conversation_id = ? AND instr(lower(content), 'refund') > 0").get(id) as { m: number }).m;
  const keys = byText.map((c) => newestMatch(c.id));
  assert.deepEqual(keys, [...keys].sort((a, b) => b - a));
  assert.equal(byText.length, Math.ceil(300 / 13));
});

test('rows changing between pages: no duplicates and no crash, list and search', () => {
  const db = new DatabaseSync(':memory:');
  seedList(db, 500, 2);
  const queries = consoleQueries(db, () => new Map());
  let t = 10_000;
  let m = 100_000;
  const touch = (page: number) => {
    // New activity on a conversation already shown and one not yet shown, and a new matching message.
    for (const id of [`c${499 - page}`, `c${page * 3}`]) {
      db.prepare('UPDATE conversations SET last_message_at = ? WHERE id = ?').run(++t, id);
      db.prepare("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at) VALUES (?, 'a', 'auto_dialog', ?, 'customer', 'refund now', '{}', ?)").run(id, `x${++m}`, t);
    }
    searchIndexQueries(db).flushQueue();
  };
  for (const f of [{ now: 0 }, { search: 'refund', now: 0 }, { search: 're', now: 0 }, { view: 'needs_you' as const, now: 0 }]) {
    const rows = allPages(queries, f, 9, touch);
    assert.equal(new Set(rows.map((r) => r.id)).size, rows.length, `no duplicates for ${JSON.stringify(f)}`);
  }
});

test('a bad or mismatched cursor is refused as input, naming the cursor', () => {
  const parse = (input: unknown) => consoleInputs.listConversations.safeParse(input);
  for (const cursor of ['nonsense!', 'e30', encodeCursor({ k: 'recent', at: 1, id: 'c1' }).slice(0, -3), '']) {
    const r = parse({ cursor });
    assert.equal(r.success, false, cursor);
    assert.match(r.error!.issues[0]!.message, /cursor/);
  }
  assert.equal(parse({ cursor: encodeCursor({ k: 'needs', at: 1, id: 'c1' }) }).success, false, 'a needs-you cursor on the normal list');
  assert.equal(parse({ cursor: encodeCursor({ k: 'match', before: 9 }) }).success, false, 'a search cursor without a search');
  assert.equal(parse({ limit: 201 }).success, false, 'pages are at most 200 rows');
  assert.equal(parse({ search: 'x', cursor: encodeCursor({ k: 'match', before: 9 }) }).success, true);
  assert.deepEqual(decodeCursor(encodeCursor({ k: 'recent', at: 5, id: 'ü-中' })), { k: 'recent', at: 5, id: 'ü-中' });
});

test('the list reads the last message only for the rows in the page, and pages off the index without a sort', () => {
  const db = new DatabaseSync(':memory:');
  seedList(db, 300, 2);
  db.exec('ANALYZE');
  const statements: string[] = [];
  const prepare = db.prepare.bind(db);
  const spy = new Proxy(db, { get: (t, k) => (k === 'prepare' ? (sql: string) => (statements.push(sql), prepare(sql)) : Reflect.get(t, k, t) as unknown) });
  const queries = consoleQueries(spy, () => new Map());
  const first = queries.conversations({ limit: 50, now: 0 });
  queries.conversations({ limit: 50, now: 0, cursor: decodeCursor(first.nextCursor!) });
  const pageSql = statements.filter((s) => /LIMIT \?\) c/.test(s));
  assert.equal(pageSql.length, 2, 'first and next page prepared');
  for (const [sql, args] of [[pageSql[0]!, [51]], [pageSql[1]!, [16, 16, 'c48', 51]]] as const) {
    const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ id: number; parent: number; detail: string }>;
    const byId = new Map(rows.map((r) => [r.id, r]));
    const ancestors = (r: { parent: number }): string[] => {
      const out: string[] = [];
      for (let p = byId.get(r.parent); p; p = byId.get(p.parent)) out.push(p.detail);
      return out;
    };
    // The last-message subquery belongs to the outer query over the page, not to the scan that chooses it.
    const lastText = rows.find((r) => /CORRELATED SCALAR SUBQUERY/.test(r.detail));
    assert.ok(lastText, rows.map((r) => r.detail).join('\n'));
    assert.ok(!ancestors(lastText).some((d) => /CO-ROUTINE|MATERIALIZE/.test(d)), rows.map((r) => r.detail).join('\n'));
    const page = rows.filter((r) => ancestors(r).some((d) => /CO-ROUTINE|MATERIALIZE/.test(d))).map((r) => r.detail).join(' | ');
    assert.match(page, /conversations_recent/, 'the page is read in index order');
    assert.doesNotMatch(page, /TEMP B-TREE|messages/, 'no sort and no message read while choosing the page');
  }
  assert.match(pageSql[1]!, /c\.last_message_at <= \?/, 'the next page starts at the cursor (keyset), not at an offset');
});

test('a search result shows the matching message, cut to begin near the match, in place of the last line', () => {
  const db = new DatabaseSync(':memory:');
  seedList(db, 3, 1);
  const long = `${'Hello, I ordered the blue kettle last month and it arrived with a dent in the side, '.repeat(2)}so I would like a refund please.`;
  db.prepare("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at) VALUES ('c1', 'a', 'auto_dialog', 'long', 'customer', ?, '{}', 10)").run(long);
  db.prepare("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at) VALUES ('c1', 'a', 'auto_dialog', 'later', 'customer', 'thanks', '{}', 11)").run();
  searchIndexQueries(db).flushQueue();
  const queries = consoleQueries(db, () => new Map());
  const hit = queries.conversations({ search: 'refund', limit: 10, now: 0 }).items.find((c) => c.id === 'c1')!;
  assert.equal(hit.lastText, 'thanks', 'the last line is still known');
  assert.ok(hit.matchText!.startsWith('…') && hit.matchText!.endsWith('so I would like a refund please.'), hit.matchText!);
  assert.ok(hit.matchText!.indexOf('refund') <= 2 * 24 + 1, hit.matchText!);
  assert.equal(queries.conversations({ limit: 10, now: 0 }).items.find((c) => c.id === 'c1')!.matchText, undefined, 'no search, no match text');
});

test('excerpt keeps a short lead, opens on a word where one is near, and leaves a match near the start alone', () => {
  assert.equal(excerpt('refund now', 'refund'), 'refund now');
  assert.equal(excerpt(`${'x'.repeat(100)}退款申请`, '退款'), `…${'x'.repeat(24)}退款申请`);
  assert.equal(excerpt('the quick brown fox jumps over the lazy dog and asks for a refund', 'refund'), '…lazy dog and asks for a refund');
});
