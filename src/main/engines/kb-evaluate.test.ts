import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildKbIndex } from './kb-index.ts';
import { CURVE_THRESHOLDS, answeredShares, judgeQuestions, parseLabelledQuestions, tradeOffAt } from './kb-evaluate.ts';
import { ImportError } from '../cli/kb-import.ts';

const KNOWN = new Set(['Where is my order?', 'Do you ship abroad?']);

test('labelled questions from JSON Lines (other keys ignored, expected null or absent) and from CSV', () => {
  const jsonl = '{"question":"where is my parcel","expected":"Where is my order?","lang":"en"}\n\n{"question":"gift cards?"}\n';
  assert.deepEqual(parseLabelledQuestions('mine.jsonl', jsonl, KNOWN), [
    { question: 'where is my parcel', expected: 'Where is my order?' },
    { question: 'gift cards?', expected: null },
  ]);
  const csv = 'question,expected\n"where, exactly, is my parcel",Where is my order?\ngift cards?,\n';
  assert.deepEqual(parseLabelledQuestions('mine.csv', csv, KNOWN), [
    { question: 'where, exactly, is my parcel', expected: 'Where is my order?' },
    { question: 'gift cards?', expected: null },
  ]);
});

test('a bad file is refused with the line and the reason', () => {
  const refused = (name: string, text: string, why: RegExp): void => assert.throws(() => parseLabelledQuestions(name, text, KNOWN), (e: Error) => e instanceof ImportError && why.test(e.message));
  refused('x.jsonl', '{"question":"a"}\n{oops', /^line 2: not valid JSON$/);
  refused('x.jsonl', '{"expected":null}', /^line 1: needs "question"/);
  refused('x.csv', 'q,a\nx,y', /header must be "question,expected"/);
  refused('x.jsonl', '{"question":"a","expected":"No such entry?"}', /"No such entry\?" is no question of the knowledge base/);
  refused('x.txt', 'a', /use \.jsonl .* or \.csv/);
  refused('x.jsonl', '\n', /no questions/);
});

test('the trade-off at each threshold: right, wrong, handed off, and uncovered questions answered', () => {
  const index = buildKbIndex([
    { id: 1, question: 'Where is my order?', answer: 'Open Orders.' },
    { id: 2, question: 'Do you ship abroad?', answer: 'Yes.' },
  ]);
  const judged = judgeQuestions(index, [
    { question: 'where is my order', expected: 'Where is my order?' },
    { question: 'do you ship abroad to Canada', expected: 'Do you ship abroad?' },
    { question: 'do you sell gift cards', expected: null },
  ]);
  const low = tradeOffAt(judged, 0.2);
  const high = tradeOffAt(judged, 0.99);
  assert.deepEqual([low.paraphrases, low.uncovered, low.right + low.wrong + low.handedOff], [2, 1, 2]);
  assert.equal(low.right, 2);
  assert.ok(high.handedOff >= 1, 'a high threshold hands off what a low one answers');
  assert.equal(CURVE_THRESHOLDS.length, 13);
  assert.deepEqual(answeredShares([0.3, 0.6, 0.9], [0.5, 0.95]), [{ threshold: 0.5, answered: 2 / 3 }, { threshold: 0.95, answered: 0 }]);
});
