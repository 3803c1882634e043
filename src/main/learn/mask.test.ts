import { test } from 'node:test';
import assert from 'node:assert/strict';
import { maskPersonalData } from './mask.ts';

test('emails, phone numbers, order numbers and secret links are masked in English', () => {
  assert.equal(maskPersonalData('Write to ann.lee+shop@example.co.uk please'), 'Write to [email] please');
  assert.equal(maskPersonalData('Call me on +44 20 7946 0958 or (555) 123-4567'), 'Call me on [phone] or [phone]');
  assert.equal(maskPersonalData('Where is order 1234567? Ref AB12345, ticket ORD-2024-8812.'), 'Where is order [number]? Ref [number], ticket [number].');
  assert.equal(maskPersonalData('Reset via https://shop.example.com/reset?token=abc123 now'), 'Reset via [url] now');
  assert.equal(maskPersonalData('Link https://x.example/s/9f8e7d6c5b4a3f2e1d0c'), 'Link [url]');
});

test('ordinary text keeps its numbers, words and plain links', () => {
  const plain = 'Delivery takes 3 to 5 days; see https://shop.example.com/help for the 2 options. MP3 and COVID-19 are fine.';
  assert.equal(maskPersonalData(plain), plain);
});

test('names are masked where the text gives one, and wherever a known name appears', () => {
  assert.equal(maskPersonalData('Hi, my name is Ann Lee and I forgot my password'), 'Hi, my name is [name] and I forgot my password');
  assert.equal(maskPersonalData('my name is not on the parcel'), 'my name is not on the parcel');
  assert.equal(maskPersonalData('Thanks Bob! Regards, Carol Smith', ['Bob', 'Carol Smith']), 'Thanks [name]! Regards, [name]');
  // A full name's parts are names too: the operator greets Carol Smith as Carol.
  assert.equal(maskPersonalData('Hello Carol, Mr Smith asked too', ['Carol Smith']), 'Hello [name], Mr [name] asked too');
  // A known name inside another word is left: "Ann" in "Annual" is no name.
  assert.equal(maskPersonalData('Annual plan for Ann', ['Ann']), 'Annual plan for [name]');
  // One letter is too short to mask safely.
  assert.equal(maskPersonalData('A question', ['A']), 'A question');
});

test('Chinese: 我叫 names, phone numbers and order numbers written straight after Han text', () => {
  assert.equal(maskPersonalData('你好，我叫王小明，订单号12345678还没到'), '你好，我叫[name]，订单号[number]还没到');
  assert.equal(maskPersonalData('我的手机是13812345678，邮箱wang@example.cn'), '我的手机是[phone]，邮箱[email]');
  assert.equal(maskPersonalData('我的名字是李雷。'), '我的名字是[name]。');
  assert.equal(maskPersonalData('张伟您好，已为您处理', ['张伟']), '[name]您好，已为您处理');
  assert.equal(maskPersonalData('我是想问一下退货要几天？'), '我是想问一下退货要几天？');
});
