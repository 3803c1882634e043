import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../store/db.ts';
import { kbQueries, type KbQueries } from '../store/kb.ts';
import { buildKbIndex, createIndexedKnowledge } from './kb-index.ts';
import { rankKnowledge } from './kb-engine.ts';
import { searchTerms } from './text-units.ts';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

const EN = {
  ask: ['How do I', 'Can I', 'HOW can I', 'Where do I', 'Why can\'t I', 'What happens if I'],
  verb: ['reset', 'change', 'cancel', 'renew', 'Update', 'return', 'track', 'upgrade', 'pay for', 'order'],
  thing: ['password', 'orders', 'subscription', 'invoice', 'delivery address', 'gift card', 'Account', 'refund', 'passwords', 'plan', 'Café card'],
  ctx: ['on the app', 'on the website', 'after checkout', 'from abroad', 'for a business account', 'twice', 'order order'],
  chat: ['hi there', 'thanks', 'order 48213', 'error 502', 'still not working', 'ok'],
};
const ZH = {
  ask: ['怎么', '如何', '可以', '能不能', '在哪里', '为什么不能'],
  verb: ['重置', '修改', '取消', '续费', '更新', '退回', '查询', '升级'],
  thing: ['密码', '订单', '会员订阅', '发票', '收货地址', '礼品卡', '账户', '退款', '密码密码'],
  ctx: ['在手机应用上', '在官网上', '下单以后', '在国外', '用企业账户', 'App 里'],
  chat: ['你好', '谢谢', '订单号48213', '还是不行', '好的'],
};

function fill(kb: KbQueries, zh: boolean, n: number, seed: number): void {
  const r = rng(seed);
  const lang = zh ? ZH : EN;
  const sp = zh ? '' : ' ';
  for (let i = 0; i < n; i++) {
    const q = `${pick(r, lang.ask)}${sp}${pick(r, lang.verb)}${sp}${pick(r, lang.thing)}${sp}${pick(r, lang.ctx)}${zh ? '？' : '?'}`;
    const a = `${pick(r, lang.verb)}${sp}${pick(r, lang.thing)}.${sp}${r() < 0.3 ? pick(r, lang.thing) : ''}`;
    // Exact duplicates too: their bm25 ties, and the tie order must match SQLite's.
    kb.add(q, a, 0);
    if (r() < 0.05) kb.add(q, a, 0);
  }
}

function conversations(zh: boolean, n: number, seed: number): string[][] {
  const r = rng(seed);
  const lang = zh ? ZH : EN;
  const sp = zh ? '' : ' ';
  const out: string[][] = [];
  for (let i = 0; i < n; i++) {
    const ask = `${pick(r, lang.ask)}${sp}${pick(r, lang.verb)}${sp}${pick(r, lang.thing)}${r() < 0.5 ? `${sp}${pick(r, lang.ctx)}` : ''}`;
    out.push(r() < 0.6 ? [ask] : [pick(r, lang.chat), ask]);
  }
  return out;
}

function generatedKb(): KbQueries {
  const kb = kbQueries(openDatabase(':memory:'));
  fill(kb, false, 1500, 3);
  fill(kb, true, 1500, 7);
  return kb;
}

test('the in-memory index returns the rows and order of the FTS5 queries (English and Chinese)', () => {
  const kb = generatedKb();
  const index = buildKbIndex(kb.all());
  for (const recent of [...conversations(false, 150, 11), ...conversations(true, 150, 13)]) {
    const terms = searchTerms(recent.join('\n'));
    if (terms.indexed.length > 0) {
      const expression = terms.indexed.map((t) => `"${t}"`).join(' OR ');
      const ids = (xs: Array<{ id: number }>): number[] => xs.map((x) => x.id);
      assert.deepEqual(ids(index.match(expression, 25)), ids(kb.match(expression, 25)), expression);
    }
    for (const b of terms.bigrams) assert.deepEqual(index.containing(b, 25).map((x) => x.id), kb.containing(b, 25).map((x) => x.id), b);
  }
});

test('top-5 knowledge ranked through the index equals the ranking through FTS5', () => {
  const kb = generatedKb();
  const index = buildKbIndex(kb.all());
  let compared = 0;
  for (const recent of [...conversations(false, 200, 17), ...conversations(true, 200, 19)]) {
    const viaFts = rankKnowledge(kb, recent, 5).map((r) => [r.entry.id, r.score]);
    const viaIndex = rankKnowledge(index, recent, 5).map((r) => [r.entry.id, r.score]);
    assert.deepEqual(viaIndex, viaFts, recent.join(' / '));
    compared += viaFts.length;
  }
  assert.ok(compared > 1000);
});

test('an entry added, edited or removed counts at the next query', () => {
  const kb = kbQueries(openDatabase(':memory:'));
  const source = createIndexedKnowledge(kb);
  assert.deepEqual(source.match('"refund"', 5), []);
  const id = kb.add('How long does a refund take?', 'Five working days.', 0);
  assert.deepEqual(source.match('"refund"', 5).map((c) => c.answer), ['Five working days.']);
  // Same clock time, same lengths: only the text differs.
  kb.update(id, 'How long does a refund take?', 'Four working days.', 0);
  assert.deepEqual(source.match('"refund"', 5).map((c) => c.answer), ['Four working days.']);
  kb.remove(id);
  assert.deepEqual(source.match('"refund"', 5), []);
  kb.add('发票怎么开？', '请在订单页面点击“申请发票”。', 0);
  assert.deepEqual(source.containing('发票', 5).map((c) => c.question), ['发票怎么开？']);
});
