import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from '../migrate.ts';
import { MIGRATIONS } from './index.ts';

test('migration 29 gives every existing entry an empty list of phrasings and refuses one that is no list', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 28);
  db.exec("INSERT INTO kb_entries (question, answer, created_at, updated_at) VALUES ('Where is my order?', 'Open Orders.', 0, 0)");
  migrate(db, MIGRATIONS, 29);
  assert.equal(db.prepare('SELECT phrasings FROM kb_entries').get()!['phrasings'], '[]');
  assert.throws(() => db.exec(`UPDATE kb_entries SET phrasings = '"x"'`), /CHECK constraint failed/);
  assert.throws(() => db.exec(`UPDATE kb_entries SET phrasings = '[oops'`), /CHECK constraint failed/);
});

test('an entry\'s phrasings changing changes the knowledge base\'s version, so the engine re-reads it', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 29);
  db.exec("INSERT INTO kb_entries (question, answer, created_at, updated_at) VALUES ('Where is my order?', 'Open Orders.', 0, 0)");
  const version = (): string => Buffer.from((db.prepare('SELECT block FROM kb_fts_data WHERE id = 10').get()!['block'] as Uint8Array)).toString('hex');
  const before = version();
  db.exec(`UPDATE kb_entries SET phrasings = '["where is my parcel"]'`);
  assert.notEqual(version(), before);
});
