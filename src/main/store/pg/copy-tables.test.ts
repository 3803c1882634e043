import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { foreignKeyOrder, insertSql, toParam, ValueError, SchemaMismatchError, type TablePlan } from './copy-tables.ts';
import { canonicalJson, normal } from './copy-verify.ts';

const plan = (name: string): TablePlan => ({ name, columns: [{ name: 'id', type: 'bigint' }], key: ['id'], identity: 'id' });

describe('store copy: tables and values', () => {
  it('orders tables parents first, whatever order they come in, and refuses a cycle', () => {
    const edges = [
      { child: 'messages', parent: 'conversations' },
      { child: 'conversations', parent: 'clients' },
      { child: 'conversations', parent: 'agents' },
      { child: 'deliveries', parent: 'replies' },
      { child: 'replies', parent: 'conversations' },
    ];
    const order = foreignKeyOrder(['deliveries', 'messages', 'replies', 'settings', 'conversations', 'clients', 'agents'].map(plan), edges).map((p) => p.name);
    for (const { child, parent } of edges) assert.ok(order.indexOf(parent) < order.indexOf(child), `${parent} before ${child}: ${order.join(' ')}`);
    assert.equal(order.length, 7);
    assert.throws(() => foreignKeyOrder(['a', 'b'].map(plan), [{ child: 'a', parent: 'b' }, { child: 'b', parent: 'a' }]), SchemaMismatchError);
  });

  it('inserts a batch as one statement over column arrays, casting JSON text to jsonb and quoting every name', () => {
    const sql = insertSql({ name: 'replay_rows', columns: [{ name: 'run_id', type: 'bigint' }, { name: 'before', type: 'jsonb' }, { name: 'vector', type: 'bytea' }], key: ['run_id'], identity: null });
    assert.equal(sql, 'INSERT INTO "replay_rows" ("run_id", "before", "vector") SELECT u.c0, u.c1::jsonb, u.c2 FROM unnest($1::bigint[], $2::text[], $3::bytea[]) AS u(c0, c1, c2)');
  });

  it('converts SQLite values for PostgreSQL, and names what SQLite let in but PostgreSQL cannot hold', () => {
    assert.equal(toParam(9007199254740993n, 'bigint'), '9007199254740993', 'no precision lost past 2^53');
    assert.equal(toParam(1, 'smallint'), '1');
    assert.equal(toParam(1.25, 'double precision'), '1.25');
    assert.equal(toParam(7n, 'double precision'), '7');
    assert.equal(toParam(1n, 'boolean'), true);
    assert.equal(toParam(0n, 'boolean'), false);
    assert.equal(toParam('{"a":1}', 'jsonb'), '{"a":1}');
    assert.equal(toParam(42n, 'text'), '42', 'SQLite stores a number in a text column as it likes');
    assert.deepEqual(toParam(new Uint8Array([1, 2, 255]), 'bytea'), Buffer.from([1, 2, 255]));
    assert.equal(toParam(null, 'jsonb'), null);
    assert.throws(() => toParam('abc', 'bigint'), (e: Error) => e instanceof ValueError && /string "abc" where PostgreSQL expects an integer/.test(e.message));
    assert.throws(() => toParam(1.5, 'integer'), /number 1.5 where PostgreSQL expects an integer/);
    assert.throws(() => toParam(2n, 'boolean'), /expects 0 or 1/);
    assert.throws(() => toParam('a\u0000b', 'text'), /NUL character/);
    assert.throws(() => toParam(new Uint8Array(3), 'text'), /a BLOB of 3 bytes where PostgreSQL expects text/);
    assert.throws(() => toParam('x', 'bytea'), /expects bytes/);
  });

  it('normalises both sides to one text form: JSON key order and spacing, int8 strings, Buffers', () => {
    assert.equal(normal('{ "b": [1, {"d": null, "c": 2}], "a": "中" }', 'jsonb', 'sqlite'), normal({ a: '中', b: [1, { c: 2, d: null }] }, 'jsonb', 'pg'));
    assert.notEqual(normal('[1,2]', 'jsonb', 'sqlite'), normal([2, 1], 'jsonb', 'pg'), 'array order counts');
    assert.equal(normal('"text"', 'jsonb', 'sqlite'), normal('text', 'jsonb', 'pg'), 'a JSON string: text on SQLite, parsed by node-postgres');
    assert.equal(normal(12n, 'bigint', 'sqlite'), normal('12', 'bigint', 'pg'));
    assert.equal(normal(3n, 'integer', 'sqlite'), normal(3, 'integer', 'pg'));
    assert.equal(normal(0.1, 'double precision', 'sqlite'), normal(0.1, 'double precision', 'pg'));
    assert.equal(normal(new Uint8Array([0, 171]), 'bytea', 'sqlite'), normal(Buffer.from([0, 171]), 'bytea', 'pg'));
    assert.equal(normal(null, 'text', 'sqlite'), normal(null, 'text', 'pg'));
    assert.notEqual(normal(null, 'text', 'sqlite'), normal('null', 'text', 'pg'), 'SQL NULL is not the string "null"');
    assert.notEqual(normal('a', 'text', 'sqlite'), normal('b', 'text', 'pg'));
    assert.equal(canonicalJson({ b: 1, a: { d: [], c: true } }), '{"a":{"c":true,"d":[]},"b":1}');
  });
});
