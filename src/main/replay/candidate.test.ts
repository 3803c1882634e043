import { test } from 'node:test';
import assert from 'node:assert/strict';
import { candidateKnowledge } from './candidate.ts';
import { rankKnowledge } from '../engines/kb-engine.ts';

const current = [
  { id: 3, question: 'Where is my order?', answer: 'Open Orders to track it.', phrasings: [] },
  { id: 7, question: 'How do I reset my password?', answer: 'Use "Forgot password".', phrasings: [] },
];

test('the candidate knowledge base holds the new entries after the highest id and the new phrasings, and leaves the current one alone', () => {
  const before = structuredClone(current);
  const c = candidateKnowledge(current, {
    entries: [{ question: 'How do I delete my account?', answer: 'Settings, then Delete account.', phrasings: ['close my account'] }],
    phrasings: [{ entryId: 3, text: 'when does my parcel arrive' }, { entryId: 99, text: 'gone' }],
  });
  assert.deepEqual([c.entries, c.phrasings, c.orphaned, c.index.size], [1, 1, 1, 3]);
  const top = rankKnowledge(c.index, ['How do I delete my account?'], 1)[0]!;
  assert.equal(top.entry.id, 8);
  assert.equal(top.entry.answer, 'Settings, then Delete account.');
  assert.deepEqual(current, before);
});
