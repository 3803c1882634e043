import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../store/db.ts';
import { kbQueries } from '../store/kb.ts';
import { entryWithAnswer } from './entry-answers.ts';

test('an answer is matched to the entry it comes from, and an edit, an addition or a removal is seen at the next match', async () => {
  const kb = kbQueries(openDatabase(':memory:'));
  const order = kb.add('Where is my order?', 'Open Orders in your account to see where your parcel is.', 0);
  assert.equal((await entryWithAnswer(kb, 'Hi! Open Orders in your account to see where your parcel is.'))?.id, order);
  assert.equal(await entryWithAnswer(kb, 'Settings, then Privacy, then Close account.'), null);

  // Words held from before the edit would still match the old answer and miss the new one.
  kb.update(order, 'Where is my order?', 'Track the parcel from the link in your shipping email.', 1);
  assert.equal(await entryWithAnswer(kb, 'Open Orders in your account to see where your parcel is.'), null);
  assert.equal((await entryWithAnswer(kb, 'Track the parcel from the link in your shipping email, please.'))?.id, order);

  const close = kb.add('How do I close my account?', 'Settings, then Privacy, then Close account.', 2);
  assert.deepEqual(await entryWithAnswer(kb, 'Settings, then Privacy, then Close account.'), { id: close, question: 'How do I close my account?', phrasings: [], score: 1 });
  kb.remove(close);
  assert.equal(await entryWithAnswer(kb, 'Settings, then Privacy, then Close account.'), null);
});
