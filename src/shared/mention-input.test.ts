import { test } from 'node:test';
import assert from 'node:assert/strict';
import { completeMention, matchMembers, mentionAt } from './mention-input.ts';
import { mentionsIn } from './console-team.ts';

test('a mention in progress is found at the caret, not inside an e-mail address or after a space', () => {
  assert.deepEqual(mentionAt('hi @om', 6), { start: 3, query: 'om' });
  assert.deepEqual(mentionAt('@', 1), { start: 0, query: '' });
  assert.deepEqual(mentionAt('见（@ann', 6), { start: 2, query: 'ann' });
  assert.equal(mentionAt('mail ann@example.com', 20), null);
  assert.equal(mentionAt('hi @omar and', 12), null);
  assert.equal(mentionAt('no at here', 5), null);
});

test('completing puts @id and one space at the mention, the caret after it', () => {
  assert.deepEqual(completeMention('ask @om please', 7, 4, 'omar'), { value: 'ask @omar please', caret: 10 });
  assert.deepEqual(completeMention('@a', 2, 0, 'ann'), { value: '@ann ', caret: 5 });
});

test('members match by id or name, those starting with the query first', () => {
  const members = [{ id: 'lee', name: 'Omar Lee' }, { id: 'omar', name: 'Omar K' }, { id: 'ann', name: 'Ann' }];
  assert.deepEqual(matchMembers(members, 'om').map((m) => m.id), ['lee', 'omar']);
  assert.deepEqual(matchMembers(members, 'lee').map((m) => m.id), ['lee']);
  assert.deepEqual(matchMembers(members, '').map((m) => m.id), ['lee', 'omar', 'ann']);
});

test('the service reads the same mentions the box completes, each once, without trailing punctuation', () => {
  assert.deepEqual(mentionsIn('@omar can you check? cc @ann, and @omar again. mail x@y.z'), ['omar', 'ann']);
  assert.deepEqual(mentionsIn('请（@ann）看一下，@lee。'), ['ann', 'lee']);
});
