// npm run bench -- kb-scale: the built-in engine's knowledge-base match per question (issue 10),
// over generated English and Chinese knowledge bases of 0 and 100 (same-run baselines), 1,000 and
// 10,000 entries in a temp SQLite file, through the store's kb queries as the server uses them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/main/store/db.ts';
import { kbQueries } from '../src/main/store/kb.ts';
import { createKbEngine } from '../src/main/engines/kb-engine.ts';
import { buildKbIndex } from '../src/main/engines/kb-index.ts';
import type { ContextLine } from '../src/main/engines/engine.ts';
import { fmt } from './lib.ts';

/** A small deterministic generator, so every run measures the same texts. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

const EN = {
  ask: ['How do I', 'Can I', 'How can I', 'Is it possible to', 'Where do I', 'What happens if I', 'Why can\'t I', 'When can I'],
  verb: ['reset', 'change', 'cancel', 'renew', 'update', 'return', 'track', 'upgrade', 'transfer', 'delete', 'pay for', 'activate'],
  thing: ['password', 'order', 'subscription', 'invoice', 'delivery address', 'membership', 'gift card', 'account', 'phone number', 'refund',
    'warranty', 'coupon', 'shipping method', 'payment card', 'loyalty points', 'booking', 'parcel', 'email address', 'plan', 'device'],
  ctx: ['on the app', 'on the website', 'after checkout', 'from abroad', 'for a business account', 'in the store', 'before it ships', 'for my family',
    'with a voucher', 'on a weekend', 'without a receipt', 'twice in a month'],
  answer: ['Open Settings and choose', 'Go to My Account, then', 'Contact us with your order number to', 'You can do this within 30 days:', 'Tap the menu and select'],
  chat: ['hi there', 'thanks a lot', 'my order number is 48213', 'it says error 502', 'I already tried that', 'ok', 'still not working', 'this is urgent'],
  off: ['Do you sell pizza?', 'What is the weather tomorrow?', 'Who won the match last night?', 'Tell me a joke', 'asdf qwer zxcv'],
};
const ZH = {
  ask: ['怎么', '如何', '可以', '能不能', '在哪里', '为什么不能', '什么时候可以'],
  verb: ['重置', '修改', '取消', '续费', '更新', '退回', '查询', '升级', '转让', '删除', '支付', '激活'],
  thing: ['密码', '订单', '会员订阅', '发票', '收货地址', '会员卡', '礼品卡', '账户', '手机号码', '退款', '保修', '优惠券', '配送方式', '银行卡', '积分',
    '预约', '包裹', '邮箱地址', '套餐', '设备'],
  ctx: ['在手机应用上', '在官网上', '下单以后', '在国外', '用企业账户', '在门店', '发货之前', '给家人', '用代金券', '在周末', '没有小票', '一个月两次'],
  answer: ['打开设置并选择', '进入我的账户，然后', '请提供订单号联系客服以', '三十天内可以办理：', '点击菜单并选择'],
  chat: ['你好', '谢谢', '我的订单号是48213', '显示错误502', '我已经试过了', '好的', '还是不行', '很着急'],
  off: ['你们卖披萨吗', '明天天气怎么样', '昨晚比赛谁赢了', '讲个笑话', '随便问问'],
};
type Lang = typeof EN;

function entries(lang: Lang, zh: boolean, n: number, seed: number): Array<[string, string]> {
  const r = rng(seed);
  const sp = zh ? '' : ' ';
  const out: Array<[string, string]> = [];
  const seen = new Set<string>();
  while (out.length < n) {
    const q = `${pick(r, lang.ask)}${sp}${pick(r, lang.verb)}${sp}${zh ? '' : 'my '}${pick(r, lang.thing)}${sp}${pick(r, lang.ctx)}${r() < 0.3 ? `${sp}#${out.length}` : ''}${zh ? '？' : '?'}`;
    if (seen.has(q)) continue;
    seen.add(q);
    out.push([q, `${pick(r, lang.answer)}${sp}${pick(r, lang.verb)}${sp}${pick(r, lang.thing)}.${sp}${pick(r, lang.answer)}${sp}${pick(r, lang.thing)}.`]);
  }
  return out;
}

/** Conversations as customers write them: paraphrases, follow-ups with chatter, and off-topic lines. */
function questions(lang: Lang, zh: boolean, count: number, seed: number): ContextLine[][] {
  const r = rng(seed);
  const sp = zh ? '' : ' ';
  const line = (content: string, at: number): ContextLine => ({ role: 'customer', speaker: 'u', content, at });
  const out: ContextLine[][] = [];
  for (let i = 0; i < count; i++) {
    const ask = `${pick(r, lang.ask)}${sp}${pick(r, lang.verb)}${sp}${pick(r, lang.thing)}${r() < 0.5 ? `${sp}${pick(r, lang.ctx)}` : ''}`;
    const kind = r();
    if (kind < 0.6) out.push([line(ask, 1)]);
    else if (kind < 0.9) out.push([line(ask, 1), { role: 'ai', speaker: null, content: 'ok', at: 2 }, line(pick(r, lang.chat), 3), line(pick(r, lang.chat), 4)]);
    else out.push([line(pick(r, lang.off), 1)]);
  }
  return out;
}

async function measure(zh: boolean, size: number): Promise<string> {
  const lang = zh ? ZH : EN;
  const dir = mkdtempSync(join(tmpdir(), 'sb-kb-'));
  const db = openDatabase(join(dir, 'kb.db'));
  const kb = kbQueries(db);
  db.exec('BEGIN');
  for (const [q, a] of entries(lang, zh, size, zh ? 7 : 3)) kb.add(q, a, 0);
  db.exec('COMMIT');
  const buildStart = performance.now();
  const source = buildKbIndex(kb.all());
  const buildMs = performance.now() - buildStart;
  const engine = createKbEngine(source);
  const asks = questions(lang, zh, 1000, 11);
  const signal = new AbortController().signal;
  const run = async (context: ContextLine[]) =>
    engine.answer({ purpose: 'auto_reply', channel: 'im', isGroup: false, context, fallbackText: 'x' } as Parameters<typeof engine.answer>[0], signal);
  for (const c of asks.slice(0, 100)) await run(c); // warm the caches (and load the Chinese word segmenter)
  const times = new Float64Array(asks.length);
  let answered = 0;
  const start = performance.now();
  for (let i = 0; i < asks.length; i++) {
    const t = performance.now();
    const a = await run(asks[i]!);
    times[i] = (performance.now() - t) * 1000;
    if (!a.handoff) answered++;
  }
  const total = (performance.now() - start) / 1000;
  times.sort();
  db.close();
  rmSync(dir, { recursive: true, force: true });
  const p = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return `| ${zh ? 'Chinese' : 'English'} | ${fmt(size)} | ${fmt(buildMs)} | ${fmt(p(0.5))} | ${fmt(p(0.99))} | ${fmt(asks.length / total)} | ${Math.round((answered / asks.length) * 100)}% |`;
}

export async function runKbScale(): Promise<string> {
  const rows = ['kb-scale: built-in engine, 1,000 questions per row (60% single questions, 30% with chatter follow-ups, 10% off-topic)',
    '| language | entries | index built in ms | p50 µs | p99 µs | questions/s | answered |', '|---|---|---|---|---|---|---|'];
  for (const zh of [false, true]) for (const size of [0, 100, 1000, 10_000]) rows.push(await measure(zh, size));
  return rows.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await runKbScale());
