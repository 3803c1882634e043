import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePairs, ImportError } from './kb-import.ts';
import { openDatabase } from '../store/db.ts';
import { kbQueries } from '../store/kb.ts';

test('a CSV file may carry "also asked as" phrasings, one per line of the cell or separated by " | "', () => {
  const csv = 'question,answer,phrasings\n"Where is my order?","Open Orders.","where is my parcel\nhas my package shipped | track my order"\nDo you ship abroad?,Yes.,\n';
  assert.deepEqual(parsePairs('kb.csv', csv), [
    { question: 'Where is my order?', answer: 'Open Orders.', phrasings: ['where is my parcel', 'has my package shipped', 'track my order'] },
    { question: 'Do you ship abroad?', answer: 'Yes.', phrasings: [] },
  ]);
  // Without the column, entries have none; an unknown column is still refused.
  assert.deepEqual(parsePairs('kb.csv', 'question,answer\nQ,A\n')[0]!.phrasings, []);
  assert.throws(() => parsePairs('kb.csv', 'question,answer,notes\nQ,A,x\n'), (e: Error) => e instanceof ImportError && /"question,answer" or "question,answer,phrasings"/.test(e.message));
});

test('a JSON file gives phrasings as an array of strings, and says which entry is wrong when it is not', () => {
  assert.deepEqual(parsePairs('kb.json', '[{"question":"Q","answer":"A","phrasings":["q2"]}]'), [{ question: 'Q', answer: 'A', phrasings: ['q2'] }]);
  assert.throws(() => parsePairs('kb.json', '[{"question":"Q","answer":"A"},\n{"question":"Q","answer":"A","phrasings":"q2"}]'), (e: Error) => /entry 2 \(line 2\): phrasings/.test(e.message));
});

test('the store keeps phrasings trimmed and without repeats, and an edit that leaves them out keeps them', () => {
  const db = openDatabase(':memory:');
  const store = { kb: kbQueries(db) };
  const id = store.kb.add('Where is my order?', 'Open Orders.', 1, [' where is my parcel ', 'Where is my order?', 'WHERE IS MY PARCEL', 'where is my parcel??', '']);
  assert.deepEqual(store.kb.get(id)!.phrasings, ['where is my parcel']);
  assert.equal(store.kb.addPhrasing(id, 'track my order', 2), true);
  assert.equal(store.kb.addPhrasing(999, 'x', 2), false);
  store.kb.update(id, 'Where is my order?', 'Open Orders in your account.', 3);
  assert.deepEqual(store.kb.get(id)!.phrasings, ['where is my parcel', 'track my order']);
  store.kb.update(id, 'Where is my order?', 'Open Orders.', 4, []);
  assert.deepEqual(store.kb.get(id)!.phrasings, []);
  // The console's search finds an entry by a phrasing too.
  store.kb.addPhrasing(id, 'parcel tracking', 5);
  assert.deepEqual(store.kb.search('PARCEL', 10).map((e) => e.id), [id]);
  db.close();
});
