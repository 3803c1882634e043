import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupProposals, WEEK_MS, type Groupable } from './grouping.ts';
import { answerLikeness, questionLikeness, SAME_ANSWER, SAME_QUESTION } from './similarity.ts';

const DAY = 24 * 60 * 60_000;
const NOW = 100 * DAY;
let next = 1;
const entry = (question: string, daysAgo: number): Groupable => ({ id: next++, kind: 'entry', entryId: null, question, createdAt: NOW - daysAgo * DAY });
const phrasing = (entryId: number, question: string, daysAgo: number): Groupable => ({ id: next++, kind: 'phrasing', entryId, question, createdAt: NOW - daysAgo * DAY });

test('the same question asked again groups, with how many times this week and when last', () => {
  const groups = groupProposals(
    [
      entry('How do I delete my account?', 10),
      entry('how can I delete my account', 2),
      entry('Delete my account please!', 1),
      entry('Do you ship to Canada?', 3),
    ],
    NOW,
  );
  assert.equal(groups.length, 2);
  const [deleting, shipping] = groups;
  assert.equal(deleting!.count, 3);
  assert.equal(deleting!.thisWeek, 2, 'the one ten days ago is not this week');
  assert.equal(deleting!.lastAt, NOW - DAY);
  assert.equal(deleting!.proposals[0]!.question, 'Delete my account please!', 'newest first');
  assert.equal(shipping!.count, 1);
});

test('phrasings for one entry group by the entry, whatever their words', () => {
  const groups = groupProposals([phrasing(7, 'where is my parcel', 1), phrasing(7, 'tracking?', 2), phrasing(8, 'where is my parcel', 1)], NOW);
  assert.deepEqual(groups.map((g) => [g.entryId, g.count]), [[7, 2], [8, 1]]);
});

test('Chinese questions group on shared character pairs', () => {
  const groups = groupProposals([entry('怎么删除我的账号？', 1), entry('请问如何删除账号', 1), entry('可以寄到加拿大吗', 1)], NOW);
  assert.deepEqual(groups.map((g) => g.count), [2, 1]);
  assert.ok(questionLikeness('怎么删除我的账号？', '请问如何删除账号') >= SAME_QUESTION);
});

test('a week is counted back from the injected clock, not the wall clock', () => {
  const [g] = groupProposals([entry('refund?', 0), entry('refund', 6.9), entry('refund!', 7.1)], NOW);
  assert.equal(g!.count, 3);
  assert.equal(g!.thisWeek, 2);
  assert.equal(groupProposals([entry('refund?', 0)], NOW + WEEK_MS + 1)[0]!.thisWeek, 0);
});

test('an operator answer that is an entry\'s answer, greeted or lightly edited, is recognised; another is not', () => {
  const kb = 'Open Settings, choose Security, then Reset password. A link arrives by email within 5 minutes.';
  assert.ok(answerLikeness(`Hi [name]! ${kb}`, kb) >= SAME_ANSWER);
  assert.ok(answerLikeness('Open Settings, choose Security, then Reset password; the link arrives by email in 5 minutes.', kb) >= SAME_ANSWER);
  assert.ok(answerLikeness('We ship to Canada in 7 days.', kb) < SAME_ANSWER);
});
