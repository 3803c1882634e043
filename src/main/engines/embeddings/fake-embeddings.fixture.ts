import { createServer, type IncomingHttpHeaders } from 'node:http';
import { answerLater, type CannedAnswer } from '../../../../test/helpers/canned-answer.ts';
import type { AddressInfo } from 'node:net';

/**
 * A deterministic stand-in for an embedding model: a bag of concepts where synonyms share a
 * dimension ("parcel", "package", "order" and "包裹" all count for one), plus a few hashed
 * dimensions for other words so that unrelated texts are not all alike. Close in meaning is
 * close in angle, which is all the ranking needs to be tested on.
 */
const CONCEPTS: ReadonlyArray<readonly string[]> = [
  ['parcel', 'package', 'order', 'shipment', 'delivery', 'deliver', '包裹', '订单', '快递'],
  ['password', 'passcode', 'login', 'sign-in', 'credentials', '密码'],
  ['reset', 'forgot', 'forgotten', 'lost', 'recover', 'change', '忘记', '重置'],
  ['arrive', 'arrives', 'arrival', 'long', 'days', 'when', 'time', '多久', '送达'],
  ['refund', 'return', 'money', 'back', '退款', '退货'],
  ['where', 'track', 'status', 'find', '在哪'],
  ['account', 'profile', '账户', '账号'],
  ['delete', 'remove', 'close', 'cancel', '删除', '注销'],
  ['email', 'mail', 'address', '邮箱'],
];
/** Words a real model makes little of: left out, so that sharing "do you" is no match. */
const STOP = new Set(['a', 'an', 'the', 'i', 'my', 'me', 'you', 'your', 'do', 'does', 'is', 'are', 'to', 'for', 'of', 'on', 'in', 'can', 'will', 'how', 'what', 'which', 'it', 'and', 'or', 'we', 'get', 'until']);
const HASHED = 128;
export const FAKE_DIMS = CONCEPTS.length + HASHED;

const conceptOf = new Map<string, number>();
CONCEPTS.forEach((words, i) => words.forEach((w) => conceptOf.set(w, i)));

function words(text: string): string[] {
  const lower = text.toLowerCase();
  const out: string[] = [...(lower.match(/[a-z0-9-]+/g) ?? [])];
  // Chinese has no spaces: every listed word found in the text counts.
  for (const w of conceptOf.keys()) if (/[^\x00-\x7f]/.test(w) && lower.includes(w)) out.push(w);
  return out;
}

/** The fake model's vector for a text (not normalized: the client normalizes). */
export function fakeEmbedding(text: string, dims = FAKE_DIMS): number[] {
  const v: number[] = Array.from({ length: dims }, () => 0);
  for (const w of words(text)) {
    if (STOP.has(w)) continue;
    const c = conceptOf.get(w);
    if (c !== undefined) v[c % dims]! += 1;
    else {
      let h = 0;
      for (const ch of w) h = (h * 31 + ch.codePointAt(0)!) >>> 0;
      v[(CONCEPTS.length + (h % HASHED)) % dims]! += 0.3;
    }
  }
  if (!v.some((x) => x !== 0)) v[dims - 1] = 1;
  return v;
}

export interface EmbeddingsCall {
  headers: IncomingHttpHeaders;
  body: { model: string; input: string[] };
}

export type EmbeddingsResponder = (call: EmbeddingsCall, index: number) => CannedAnswer | null;

/**
 * A local OpenAI-compatible embeddings server on 127.0.0.1 port 0. `respond` overrides an answer
 * (a status, a delay, a malformed body); returning null gives the fake model's vectors.
 */
export async function startFakeEmbeddings(options: { dims?: number } = {}) {
  const calls: EmbeddingsCall[] = [];
  /** Chat completions at the same base URL (an engine's chat and embedding models share it): the system prompts seen. */
  const chats: Array<{ model: string; messages: Array<{ role: string; content: string }> }> = [];
  const state: { respond: EmbeddingsResponder; dims: number } = { respond: () => null, dims: options.dims ?? FAKE_DIMS };
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      if (req.url?.endsWith('/chat/completions')) {
        chats.push(JSON.parse(text) as (typeof chats)[number]);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'Written by the chat model.' } }] }));
        return;
      }
      const call: EmbeddingsCall = { headers: req.headers, body: JSON.parse(text) as EmbeddingsCall['body'] };
      calls.push(call);
      const r = state.respond(call, calls.length - 1) ?? {
        body: { object: 'list', model: call.body.model, data: call.body.input.map((t, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(t, state.dims) })) },
      };
      answerLater(res, r, timers);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    calls,
    chats,
    /** Texts embedded so far, in order. */
    inputs: () => calls.flatMap((c) => c.body.input),
    set respond(fn: EmbeddingsResponder) {
      state.respond = fn;
    },
    set dims(n: number) {
      state.dims = n;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export type FakeEmbeddings = Awaited<ReturnType<typeof startFakeEmbeddings>>;

/** The knowledge base the semantic tests ask (hybrid-rank.test.ts, test/semantic-matching.test.ts). */
export const SEMANTIC_ENTRIES: ReadonlyArray<readonly [string, string]> = [
  ['How do I reset my password?', 'Open Settings > Security > Reset password.'],
  ['How do I change the email address on my account?', 'Go to Settings > Account > Email.'],
  ['Where is my order?', 'Open Orders to see the tracking link.'],
  ['How long does delivery take?', 'Standard delivery takes 3 to 5 business days.'],
  ['Do you ship internationally?', 'Yes, to most countries.'],
  ['How do I return an item?', 'Open Orders, choose the item and click Return.'],
  ['Which payment methods do you accept?', 'Visa, Mastercard, PayPal.'],
  ['What are your opening hours?', 'Monday to Friday, 9:00 to 18:00 CET.'],
  ['How much does the Pro plan cost?', '12 euros per user per month.'],
];
/**
 * Words alone match "How long does delivery take?" below the threshold ("arrival" is a delivery
 * word; "days" and "shipment" are not in its question); its meaning does.
 */
export const SEMANTIC_PARAPHRASE = 'arrival days for a shipment';
