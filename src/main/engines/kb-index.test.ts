import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../store/db.ts';
import { kbQueries } from '../store/kb.ts';
import { buildKbIndex, createIndexedKnowledge } from './kb-index.ts';

const best = (index: ReturnType<typeof buildKbIndex>, ...recent: string[]): string | undefined => index.rank(recent, 1)[0]?.entry.question;

test('a question is matched on any of an entry\'s ways of asking ("also asked as")', () => {
  const index = buildKbIndex([
    { id: 1, question: 'How do I reset my password?', answer: 'Settings > Security.', phrasings: ['locked out of my account'] },
    { id: 2, question: 'How do I change the email on my account?', answer: 'Settings > Account.' },
  ]);
  const [top] = index.rank(['I am locked out of my account'], 2);
  assert.equal(top!.entry.id, 1);
  assert.ok(top!.score > 0.9, `a phrasing said back scores as high as the question: ${top!.score}`);
  assert.deepEqual(top!.entry.phrasings, ['locked out of my account']);
});

test('rare words decide: a word every entry has does not pull an unrelated question in', () => {
  const index = buildKbIndex([
    { id: 1, question: 'How do I close my account?', answer: 'Ask us.' },
    { id: 2, question: 'How do I rename my account?', answer: 'Profile page.' },
    { id: 3, question: 'Which account types are there?', answer: 'Personal and business.' },
    { id: 4, question: 'Can I merge two invoices?', answer: 'No.' },
  ]);
  assert.equal(best(index, 'merging invoices into one account?'), 'Can I merge two invoices?');
  const scores = index.rank(['rename account'], 4);
  assert.equal(scores[0]!.entry.id, 2);
  assert.ok(scores[0]!.score - scores[1]!.score > 0.3, 'the shared word "account" adds little');
});

test('the same entry in English and Chinese answers each customer in their language; either language finds the other when alone', () => {
  const both = buildKbIndex([
    { id: 1, question: 'How do I reset my password?', answer: 'Open Settings > Security.' },
    { id: 2, question: '如何重置密码？', answer: '打开 设置 > 安全。' },
  ]);
  assert.equal(best(both, 'I forgot my password'), 'How do I reset my password?');
  assert.equal(best(both, '忘记密码了怎么办'), '如何重置密码？');
  const english = buildKbIndex([{ id: 1, question: 'How do I reset my password?', answer: 'Open Settings > Security.' }]);
  assert.equal(best(english, '忘记密码了怎么办'), 'How do I reset my password?');
});

test('a typo in a known word still finds its entry; a short unknown word is not guessed at', () => {
  const index = buildKbIndex([
    { id: 1, question: 'How long does delivery take?', answer: 'Three days.' },
    { id: 2, question: 'How do I reset my password?', answer: 'Settings.' },
  ]);
  assert.equal(best(index, 'forgot my pasword'), 'How do I reset my password?');
  assert.equal(best(index, 'how long does delivry take'), 'How long does delivery take?');
  assert.deepEqual(index.rank(['xyz'], 5), []);
});

test('a follow-up that continues the last message is read with it; a new question is read on its own', () => {
  const index = buildKbIndex([
    { id: 1, question: 'How much does the Pro plan cost?', answer: '$12 per month.' },
    { id: 2, question: 'How much does the Business plan cost?', answer: 'Business accounts are $25 per month.' },
    { id: 3, question: 'How do I open a business account?', answer: 'Apply online.' },
    { id: 4, question: 'Do you ship internationally?', answer: 'Yes.' },
  ]);
  assert.equal(best(index, 'and for business accounts?', 'How much does the Pro plan cost?'), 'How much does the Business plan cost?');
  assert.equal(best(index, 'do you ship to Canada?', 'How much does the Pro plan cost?'), 'Do you ship internationally?');
});

test('an entry added, edited or removed counts at the next question, phrasings too', () => {
  const kb = kbQueries(openDatabase(':memory:'));
  const source = createIndexedKnowledge(kb);
  const answerTo = (q: string): string | undefined => source.rank([q], 1)[0]?.entry.answer;
  assert.equal(answerTo('how long does a refund take'), undefined);
  const id = kb.add('How long does a refund take?', 'Five working days.', 0);
  assert.equal(answerTo('how long does a refund take'), 'Five working days.');
  // Same clock time, same lengths: only the text differs.
  kb.update(id, 'How long does a refund take?', 'Four working days.', 0);
  assert.equal(answerTo('how long does a refund take'), 'Four working days.');
  assert.equal(source.rank(['where is my money'], 1)[0]?.entry.id, undefined);
  kb.addPhrasing(id, 'where is my money', 0);
  assert.equal(source.rank(['where is my money'], 1)[0]?.entry.id, id);
  kb.remove(id);
  assert.equal(answerTo('how long does a refund take'), undefined);
});
