import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { consoleQueries } from './console-queries.ts';
import { FILTERS, oldList, seedList } from './console-list.fixture.ts';

test('the paged list query returns exactly the rows the old query returned, for every filter', () => {
  const db = new DatabaseSync(':memory:');
  seedList(db, 3000, 4);
  const queries = consoleQueries(db, () => new Map());
  for (const f of FILTERS) {
    const now = 1000;
    const expected = (oldList(db, { ...f, now }) as Array<{ id: string; last_text: string | null }>).map((r) => [r.id, r.last_text]);
    const actual = queries.conversations({ ...f, now }).map((r) => [r.id, r.lastText]);
    assert.ok(expected.length > 0 || f.clientId === 'nobody', `filter ${JSON.stringify(f)} finds rows`);
    assert.deepEqual(actual, expected, `filter ${JSON.stringify(f)}`);
  }
});

test('the list reads the last message only for the rows in the page, and pages off the index without a sort', () => {
  const db = new DatabaseSync(':memory:');
  seedList(db, 300, 2);
  const statements: string[] = [];
  const prepare = db.prepare.bind(db);
  const spy = new Proxy(db, { get: (t, k) => (k === 'prepare' ? (sql: string) => (statements.push(sql), prepare(sql)) : Reflect.get(t, k, t) as unknown) });
  consoleQueries(spy, () => new Map()).conversations({ limit: 50, now: 0 });
  const sql = statements.find((s) => /LIMIT \?\) c/.test(s));
  assert.ok(sql, 'the list query was prepared');
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(50) as Array<{ id: number; parent: number; detail: string }>;
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
});
