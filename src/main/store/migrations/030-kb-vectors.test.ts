import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from '../migrate.ts';
import { MIGRATIONS } from './index.ts';
import { kbQueries } from '../kb.ts';
import { kbVectorQueries } from '../kb-vectors.ts';
import type { Db } from '../db.ts';

function storeAt29(): DatabaseSync {
  const db = new DatabaseSync(':memory:');
  db.exec('PRAGMA foreign_keys = ON');
  migrate(db, MIGRATIONS, 29);
  db.exec(`INSERT INTO kb_entries (question, answer, phrasings, created_at, updated_at) VALUES ('Where is my order?', 'Open Orders.', '["where is my parcel"]', 0, 0)`);
  return db;
}

test('migration 30 keeps a version-29 knowledge base as it was and gives it no vectors yet', () => {
  const db = storeAt29();
  const before = db.prepare('SELECT * FROM kb_entries').all();
  migrate(db, MIGRATIONS, 30);
  assert.deepEqual(db.prepare('SELECT * FROM kb_entries').all(), before);
  assert.equal(kbVectorQueries(db as unknown as Db).count('nomic-embed-text'), 0);
});

test('vectors round-trip as Float32, are replaced per entry and model, and go with their entry', () => {
  const db = storeAt29();
  migrate(db, MIGRATIONS, 30);
  const vectors = kbVectorQueries(db as unknown as Db);
  const kb = kbQueries(db as unknown as Db);
  const id = kb.all()[0]!.id;
  const v = Float32Array.from([0.25, -1.5, 3]);
  assert.equal(vectors.save(id, 'm', [], [{ hash: 'q', vector: v }, { hash: 'p', vector: Float32Array.from([1, 0, 0]) }], 1), 2);
  vectors.save(id, 'other', [], [{ hash: 'q', vector: v }], 1);
  assert.deepEqual(vectors.forModel('m').map((r) => [r.entryId, r.textHash, [...r.vector]]), [
    [id, 'p', [1, 0, 0]],
    [id, 'q', [0.25, -1.5, 3]],
  ]);
  // The entry's phrasing changed: its old text's row goes, the kept one stays, the other model's too.
  vectors.save(id, 'm', ['q'], [{ hash: 'p2', vector: Float32Array.from([0, 1, 0]) }], 2);
  assert.deepEqual(vectors.forModel('m').map((r) => r.textHash).sort(), ['p2', 'q']);
  assert.equal(vectors.count('other'), 1);
  // An entry removed while its vectors were computed gets none, and no error.
  assert.equal(vectors.save(id + 99, 'm', [], [{ hash: 'x', vector: v }], 3), 0);
  kb.remove(id);
  assert.equal(vectors.count('m') + vectors.count('other'), 0, 'removed with their entry (ON DELETE CASCADE)');
  assert.throws(() => db.prepare(`INSERT INTO kb_vectors VALUES (1, 'm', 'h', 3, x'00', 0)`).run(), /CHECK constraint failed|FOREIGN KEY/);
});
