import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parsePairs } from '../src/main/cli/kb-import.ts';

const ROOT = new URL('../', import.meta.url);

test('the knowledge-base evaluation set is one bench/kb-quality can read: 200+ questions, both languages, both splits, each expected entry a question of the sample knowledge base', () => {
  const kb = new Set(parsePairs('sample-kb.csv', readFileSync(new URL('resources/sample-kb.csv', ROOT), 'utf8')).map((p) => p.question));
  const items = readFileSync(new URL('resources/eval/kb-questions.jsonl', ROOT), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { question: string; expected: string | null; lang: string; kind: string; split: string });
  assert.ok(items.length >= 200, `${items.length} questions`);
  for (const [i, item] of items.entries()) {
    assert.deepEqual(Object.keys(item).sort(), ['expected', 'kind', 'lang', 'question', 'split'], `line ${i + 1}`);
    assert.equal(item.expected === null, item.kind === 'uncovered', `line ${i + 1}: only an uncovered question has no expected entry`);
    if (item.expected !== null) assert.ok(kb.has(item.expected), `line ${i + 1}: "${item.expected}" is a question of resources/sample-kb.csv`);
  }
  const count = (f: (x: (typeof items)[number]) => boolean): number => items.filter(f).length;
  assert.ok(count((x) => x.lang === 'zh') >= 50 && count((x) => x.lang === 'en') >= 100);
  assert.ok(count((x) => x.split === 'held-out') >= 50 && count((x) => x.kind === 'uncovered') >= 40);
  for (const q of kb) assert.ok(count((x) => x.expected === q) >= 8, `every entry is asked several ways: ${q}`);
});

test('the set written blind (resources/eval/kb-questions-fresh.jsonl) has 6 paraphrases per entry and 32 uncovered questions, in both languages', () => {
  const kb = new Set(parsePairs('sample-kb.csv', readFileSync(new URL('resources/sample-kb.csv', ROOT), 'utf8')).map((p) => p.question));
  const items = readFileSync(new URL('resources/eval/kb-questions-fresh.jsonl', ROOT), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { question: string; expected: string | null; lang: string; kind: string; split: string });
  for (const [i, item] of items.entries()) {
    assert.equal(item.split, 'fresh', `line ${i + 1}`);
    assert.equal(item.expected === null, item.kind === 'uncovered', `line ${i + 1}`);
  }
  for (const q of kb) assert.equal(items.filter((x) => x.expected === q).length, 6, q);
  assert.equal(items.filter((x) => x.kind === 'uncovered' && x.lang === 'zh').length, 16);
  assert.equal(items.filter((x) => x.kind === 'uncovered' && x.lang === 'en').length, 16);
});
