import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isCjkText, textUnits } from './text-units.ts';

const units = (text: string): string[] => textUnits(text).map((u) => u.unit);

test('English: endings, contractions and the words every question has do not matter', () => {
  assert.deepEqual(units('Refunded orders'), units('refund order'));
  assert.deepEqual(units("I can't log in"), units('cannot login'));
  assert.deepEqual(units('How do I reset my password, please?'), units('reset password'));
});

test('synonyms become one unit, across English and Chinese, phrases before words', () => {
  assert.deepEqual(units('how long till my parcel arrives'), units('how many days until the package is delivered'));
  assert.deepEqual(units('忘记密码'), units('forgot password'));
  assert.deepEqual(units('do you ship to Germany'), units('do you ship to my country'));
  // "how long" is one unit, not a dropped "how" and a "long".
  assert.equal(units('how long').length, 1);
});

test('Chinese is split into words (jieba), long words with their parts, function words left out', () => {
  const got = units('账号上的邮箱地址怎么改？');
  assert.ok(got.includes('~account') && got.includes('~email') && got.includes('~change'), got.join(' '));
  assert.ok(!got.includes('的') && !got.includes('怎么'), got.join(' '));
  // Single characters and numbers count, but weakly.
  const weights = new Map(textUnits('退款 3 天').map((u) => [u.unit, u.weight]));
  assert.equal(weights.get('3'), 0.3);
});

test('the language of a text is the script most of it is in', () => {
  assert.equal(isCjkText('如何重置密码？'), true);
  assert.equal(isCjkText('Pro 套餐多少钱'), true);
  assert.equal(isCjkText('How much is Pro? 谢谢'), false);
});
