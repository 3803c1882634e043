import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changeOf, summarize } from './diff.ts';
import type { ReplayRowSide } from '../../shared/console-replay.ts';

const kb = (handoff: boolean, content: string, score: number): ReplayRowSide => ({ handoff, content, score, engine: 'kb', cause: null, llm: false, ms: 1, tokens: null });
const llm = (handoff: boolean, content: string, ms: number, tokens: ReplayRowSide['tokens']): ReplayRowSide => ({ handoff, content, score: null, engine: 'local', cause: null, llm: true, ms, tokens });

test('an outcome changes when a handoff becomes an answer or back, or the answer reads differently', () => {
  assert.equal(changeOf(kb(true, 'A colleague will answer.', 0.3), kb(false, 'Open Orders.', 0.6)), 'now_answered');
  assert.equal(changeOf(kb(false, 'Open Orders.', 0.6), kb(true, 'A colleague will answer.', 0.6)), 'now_handoff');
  assert.equal(changeOf(kb(false, 'Open Orders.', 0.6), kb(false, 'Open Orders. ', 0.9)), 'same', 'the same answer with another score is the same outcome');
  assert.equal(changeOf(kb(false, 'Open Orders.', 0.6), kb(false, 'Within 5 days.', 0.6)), 'other_answer');
  assert.equal(changeOf(kb(true, 'Fallback one.', 0.1), kb(true, 'Fallback two.', 0.2)), 'same', 'handed off both times');
});

test('totals count answered and handed off on each side, changes by kind, and LLM calls, time and reported tokens', () => {
  const rows = [
    { before: kb(true, 'f', 0.3), after: llm(false, 'Yes.', 120, { prompt: 50, completion: 5 }) },
    { before: kb(false, 'Open Orders.', 0.7), after: llm(true, 'f', 80, { prompt: 40, completion: 3 }) },
    { before: kb(false, 'Open Orders.', 0.7), after: llm(false, 'Open Orders.', 100, null) },
  ].map((r) => ({ ...r, change: changeOf(r.before, r.after) }));
  const totals = summarize(rows, 500);
  assert.deepEqual(totals.before, { answered: 2, handoff: 1, llmCalls: 0, callsWithUsage: 0, promptTokens: 0, completionTokens: 0, llmMs: 0 });
  assert.deepEqual(totals.after, { answered: 2, handoff: 1, llmCalls: 3, callsWithUsage: 2, promptTokens: 90, completionTokens: 8, llmMs: 300 });
  assert.deepEqual(totals.changed, { now_answered: 1, now_handoff: 1, other_answer: 0 });
  assert.equal(totals.questions, 3);
  assert.equal(totals.elapsedMs, 500);
});
