import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateReplay, promptTokensOf } from './estimate.ts';

const base = { from: 0, to: 1, questions: 10, capped: false, concurrency: 2 };

test('no LLM call: nothing to pay and no time to wait', () => {
  const e = estimateReplay({ ...base, calls: [], latency: () => ({ ms: 1000, measured: false }) });
  assert.deepEqual([e.llmCalls, e.promptTokens, e.completionTokensMax, e.seconds, e.basis], [0, 0, 0, 0, 'none']);
});

test('calls add their prompt tokens and their answers\' most; time is each call at its latency over the concurrency', () => {
  const calls = [
    { engine: 'local', promptTokens: 100, maxTokens: 400 },
    { engine: 'local', promptTokens: 120, maxTokens: 400 },
    { engine: 'local', promptTokens: 80, maxTokens: 400 },
    { engine: 'hosted', promptTokens: 50, maxTokens: 200 },
  ];
  const e = estimateReplay({ ...base, calls, latency: (name) => (name === 'local' ? { ms: 2000, measured: true } : { ms: 20_000, measured: false }) });
  assert.equal(e.llmCalls, 4);
  assert.equal(e.promptTokens, 350);
  assert.equal(e.completionTokensMax, 1400);
  assert.equal(e.seconds, 13, '(3 × 2 s + 20 s) over 2 at once');
  assert.equal(e.basis, 'timeout', 'one engine had no measured latency: its time-out bounds it');
  const one = estimateReplay({ ...base, concurrency: 8, calls: calls.slice(0, 1), latency: () => ({ ms: 2000, measured: true }) });
  assert.equal(one.seconds, 2, 'a concurrency above the calls does not shrink one call');
  assert.equal(one.basis, 'measured');
});

test('a prompt counts its system prompt, grounding and the context lines that fit the budget, CJK a token a character', () => {
  const line = (content: string) => ({ role: 'customer' as const, speaker: null, content, at: 0 });
  const short = promptTokensOf({ systemPrompt: 'Be brief.', handoffMarker: '[[HANDOFF]]', groundingTokens: 0, context: [line('where is my order')], isGroup: false, contextTokens: 3000 });
  const more = promptTokensOf({ systemPrompt: 'Be brief.', handoffMarker: '[[HANDOFF]]', groundingTokens: 60, context: [line('where is my order'), line('我的订单在哪里')], isGroup: false, contextTokens: 3000 });
  assert.equal(more - short, 60 + 7 + 4);
  const cut = promptTokensOf({ systemPrompt: 'Be brief.', handoffMarker: '[[HANDOFF]]', groundingTokens: 0, context: [line('x'.repeat(4000)), line('where is my order')], isGroup: false, contextTokens: 100 });
  assert.equal(cut, short, 'a line past the context budget is not sent');
});
