import { customerMessage } from '../kb-data.ts';

/**
 * The history bench/scale loads: who talks, in which conversation, when, and what they say.
 * Deterministic (seeded), so the cached store and a rebuild hold the same texts.
 */
export interface ScaleShape {
  /** Transcript entries to store: customer messages plus the replies to them (as issue 12 counts). */
  entries: number;
  conversations: number;
  /** Entries of the one long auto_dialog conversation (the transcript-open case); 0 for none. */
  longConversation: number;
  /** The history spans this long, ending when the build starts. */
  spanMs: number;
}

export const FULL_SHAPE: ScaleShape = { entries: 1_000_000, conversations: 50_000, longConversation: 5_000, spanMs: 20 * 3_600_000 };

export interface Exchange {
  /** Index of the conversation: its customer is `cust-<conv>`. */
  conv: number;
  eventType: 'auto_dialog' | 'website_dialog';
  /** msg_id of the customer message: unique per store. */
  msgId: string;
  content: string;
  at: number;
}

/** Conversations are auto_dialog (IM) three in five, website_dialog otherwise; the long one is auto_dialog. */
export const eventTypeOf = (conv: number): Exchange['eventType'] => (conv % 5 < 3 ? 'auto_dialog' : 'website_dialog');

const CHINESE = ['请问这个产品什么时候发货？', '我想申请退款，订单号是多少都可以查吗', '包裹还没有到，能帮我查一下物流吗', '密码忘记了怎么办', '谢谢你的帮助！', '可以开发票吗？'];

export function rng(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    // mulberry32: small, fast, good enough to spread texts and sizes.
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) / 4294967296) * n;
  };
}

/** The customer's n-th message: a rephrased KB question, small talk (1 in 10), or Chinese (1 in 20). */
export function scaleText(kb: Array<{ question: string }>, n: number): string {
  if (n % 20 === 3) return `${CHINESE[n % CHINESE.length]!}（${n % 97}）`;
  return customerMessage(kb, n);
}

/** How many exchanges (customer message + reply) each conversation gets: skewed sizes, exact total. */
export function exchangesPerConversation(shape: ScaleShape): Int32Array {
  const exchanges = Math.floor(shape.entries / 2);
  const sizes = new Int32Array(shape.conversations);
  const long = Math.min(Math.floor(shape.longConversation / 2), exchanges);
  const rest = exchanges - long;
  const others = shape.conversations - (long > 0 ? 1 : 0);
  const rand = rng(7);
  // Most conversations are short, some run long: weights from a skewed pick, scaled to the total.
  const weights = new Float64Array(others);
  let sum = 0;
  for (let i = 0; i < others; i++) sum += weights[i] = 0.2 + rand(1) ** 3 * 6;
  let given = 0;
  const offset = long > 0 ? 1 : 0;
  for (let i = 0; i < others; i++) given += sizes[i + offset] = Math.max(1, Math.floor((weights[i]! / sum) * rest));
  for (let i = 0; given < rest; i = (i + 1) % others) {
    sizes[i + offset]!++;
    given++;
  }
  for (let i = others - 1; given > rest; i--) {
    if (sizes[i + offset]! > 1) {
      sizes[i + offset]!--;
      given--;
    }
  }
  if (long > 0) sizes[0] = long;
  return sizes;
}

/** Every exchange in time order, spread evenly over the span ending at `end`. */
export function* exchanges(shape: ScaleShape, kb: Array<{ question: string }>, end: number): Generator<Exchange> {
  const sizes = exchangesPerConversation(shape);
  let total = 0;
  for (const s of sizes) total += s;
  const order = new Int32Array(total);
  let k = 0;
  for (let c = 0; c < sizes.length; c++) for (let j = 0; j < sizes[c]!; j++) order[k++] = c;
  const rand = rng(11);
  for (let i = total - 1; i > 0; i--) {
    const j = Math.floor(rand(i + 1));
    const t = order[i]!;
    order[i] = order[j]!;
    order[j] = t;
  }
  const start = end - shape.spanMs;
  const step = shape.spanMs / total;
  for (let i = 0; i < total; i++) {
    const conv = order[i]!;
    yield { conv, eventType: eventTypeOf(conv), msgId: `scale-${i}`, content: scaleText(kb, i), at: Math.floor(start + i * step) };
  }
}
