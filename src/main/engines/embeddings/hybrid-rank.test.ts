import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../../store/db.ts';
import { createStore, type Store } from '../../store/index.ts';
import { createIndexedKnowledge } from '../kb-index.ts';
import { createKbEngine, DEFAULT_KB_ENGINE_OPTIONS, rankKnowledge } from '../kb-engine.ts';
import { createEmbeddingsClient } from './embeddings-client.ts';
import { createSemantic, type Semantic } from './semantic.ts';
import { textHash } from './vector-math.ts';
import { startFakeEmbeddings, type FakeEmbeddings, SEMANTIC_ENTRIES, SEMANTIC_PARAPHRASE } from './fake-embeddings.fixture.ts';
import { systemClock, manualClock, type Clock } from '../../../shared/clock.ts';
import type { EngineRequest } from '../engine.ts';

const ENTRIES = SEMANTIC_ENTRIES;
const PARAPHRASE = SEMANTIC_PARAPHRASE;
const MODEL = 'fake-embed';

describe('hybrid ranking: words and meaning', () => {
  let fake: FakeEmbeddings;
  let store: Store;
  let semantic: Semantic;
  let clock: Clock;
  const logs: string[] = [];
  const setUp = (baseUrl?: string, c: Clock = systemClock) => {
    clock = c;
    const knowledge = createIndexedKnowledge(store.kb);
    semantic = createSemantic({
      knowledge,
      access: { entries: () => store.kb.all(), version: () => store.kb.version(), stored: (m) => store.kbVectors.forModel(m), save: (w) => void store.kbVectors.save(w.entryId, w.model, w.keep, w.add, 0) },
      clock,
      log: (line) => logs.push(line),
      makeClient: (url, model) => createEmbeddingsClient({ baseUrl: baseUrl ?? url, model, apiKey: null, timeoutMs: 5000, retries: 0, batchSize: 4 }),
    });
    const rank = semantic.rankerFor(fake.baseUrl, MODEL, null);
    const engine = createKbEngine(knowledge, DEFAULT_KB_ENGINE_OPTIONS, { name: 'meaning', rank });
    return { knowledge, rank, engine };
  };
  const ask = (content: string, budgetMs?: number): EngineRequest => ({
    purpose: 'website',
    channel: 'web',
    isGroup: false,
    context: [{ role: 'customer', speaker: null, content, at: 0 }],
    fallbackText: 'A colleague will answer.',
    ...(budgetMs ? { budget: { clock, endsAt: clock.now() + budgetMs } } : {}),
  });
  const signal = new AbortController().signal;

  before(async () => (fake = await startFakeEmbeddings()));
  after(() => fake.close());
  beforeEach(() => {
    store = createStore(openDatabase(':memory:'));
    for (const [q, a] of ENTRIES) store.kb.add(q, a, 0);
    fake.calls.length = 0;
    fake.respond = () => null;
    logs.length = 0;
  });

  it('answers a paraphrase that the words alone hand off, once the vectors are computed', async () => {
    const { knowledge, engine } = setUp();
    const lexical = rankKnowledge(knowledge, [PARAPHRASE], 1)[0];
    assert.ok(!lexical || lexical.score < DEFAULT_KB_ENGINE_OPTIONS.threshold, 'the lexical ranking misses it');
    // The first question started the refresh and was matched by words: it did not wait for it.
    const first = await engine.answer(ask(PARAPHRASE), signal);
    assert.equal(first.handoff, true);
    assert.match(first.cause!, /matched by words only: the knowledge base's vectors \(fake-embed\) are still being computed/);
    await semantic.vectorsOf(MODEL)!.idle();
    assert.equal(store.kbVectors.count(MODEL), ENTRIES.length, 'one vector per question, stored');
    const answer = await engine.answer(ask(PARAPHRASE), signal);
    assert.deepEqual({ content: answer.content, handoff: answer.handoff, name: engine.name }, { content: 'Standard delivery takes 3 to 5 business days.', handoff: false, name: 'meaning' });
    assert.equal(answer.cause, undefined);
    assert.ok(answer.confidence! >= DEFAULT_KB_ENGINE_OPTIONS.threshold);
    // A question close to nothing is still handed off.
    const off = await engine.answer(ask('do you sell gift cards for birthdays'), signal);
    assert.equal(off.handoff, true, JSON.stringify(off));
  });

  it('vectors computed before are used from the store after a restart: no entry is embedded again', async () => {
    setUp();
    await semantic.vectorsOf(MODEL)!.idle();
    semantic.close();
    const embedded = fake.inputs().length;
    const { engine } = setUp();
    const answer = await engine.answer(ask(PARAPHRASE), signal);
    assert.equal(answer.handoff, false);
    assert.deepEqual(fake.inputs().slice(embedded), [PARAPHRASE], 'only the question was embedded');
  });

  it('an edited entry gets new vectors and its old ones are no longer used; a phrasing added gets one', async () => {
    const { engine } = setUp();
    await semantic.vectorsOf(MODEL)!.idle();
    const id = store.kb.all().find((e) => e.question === 'How long does delivery take?')!.id;
    store.kb.update(id, 'Which countries do you ship to?', 'To most countries.', 1);
    // Until the new text has its vector, the entry is ranked by its words: the old vector lifts nothing.
    const during = await engine.answer(ask(PARAPHRASE), signal);
    assert.equal(during.handoff, true, JSON.stringify(during));
    await semantic.vectorsOf(MODEL)!.idle();
    assert.ok(fake.inputs().includes('Which countries do you ship to?'));
    const rows = store.kbVectors.forModel(MODEL).filter((r) => r.entryId === id);
    assert.deepEqual(rows.map((r) => r.textHash), [textHash('Which countries do you ship to?')], 'the old text\'s row is gone');
    assert.equal((await engine.answer(ask(PARAPHRASE), signal)).handoff, true);

    store.kb.addPhrasing(id, 'how many days until my parcel arrives', 2);
    await engine.answer(ask('hello'), signal); // any question notices the change and starts the refresh
    await semantic.vectorsOf(MODEL)!.idle();
    assert.equal(store.kbVectors.forModel(MODEL).filter((r) => r.entryId === id).length, 2);
    assert.ok(fake.inputs().includes('how many days until my parcel arrives'));
    const answer = await engine.answer(ask(PARAPHRASE), signal);
    assert.deepEqual([answer.content, answer.handoff], ['To most countries.', false]);
  });

  it('the embeddings endpoint down: answers by words with the cause, and does not ask it again for a while', async () => {
    const c = manualClock();
    const { engine } = setUp(undefined, c);
    await semantic.vectorsOf(MODEL)!.idle();
    const calls = fake.calls.length;
    fake.respond = () => ({ status: 503, raw: 'model unloaded' });
    const exact = await engine.answer(ask('How do I reset my password?'), signal);
    assert.deepEqual([exact.content, exact.handoff], ['Open Settings > Security > Reset password.', false]);
    assert.match(exact.cause!, /^matched by words only: embeddings failed: embeddings: HTTP 503 \(model unloaded\)/);
    const again = await engine.answer(ask('How do I reset my password?'), signal);
    assert.match(again.cause!, /embeddings failed: .* \(0 s ago\)/);
    assert.equal(fake.calls.length, calls + 1, 'the second question did not wait on the failing server');
    c.advance(31_000);
    fake.respond = () => null;
    assert.equal((await engine.answer(ask(PARAPHRASE), signal)).handoff, false, 'back once the pause is over');
  });

  it('a slow endpoint costs a question at most a third of its budget, then words answer', async () => {
    const { engine } = setUp();
    await semantic.vectorsOf(MODEL)!.idle();
    fake.respond = () => ({ delayMs: 60_000 });
    const started = performance.now();
    const answer = await engine.answer(ask('How do I reset my password?', 300), signal);
    assert.ok(performance.now() - started < 2000);
    assert.equal(answer.handoff, false);
    const waited = Number(/embeddings timed out: no answer within (\d+) ms/.exec(answer.cause ?? '')?.[1]);
    assert.ok(waited > 0 && waited <= 100, answer.cause);
  });

  it('a refresh that fails leaves words answering and says so once in the log', async () => {
    fake.respond = () => ({ status: 401 });
    const { engine } = setUp();
    await semantic.vectorsOf(MODEL)!.idle();
    assert.equal(store.kbVectors.count(MODEL), 0);
    assert.match(logs.join('\n'), /knowledge-base vectors \(fake-embed\) not refreshed: embeddings: HTTP 401, the API key was refused/);
    const answer = await engine.answer(ask('How do I reset my password?'), signal);
    assert.equal(answer.handoff, false);
  });

  it('an engine with an unreachable embeddings URL never fails an answer', async () => {
    const { engine } = setUp('http://127.0.0.1:1/v1');
    await semantic.vectorsOf(MODEL)!.idle();
    const answer = await engine.answer(ask('How do I reset my password?'), signal);
    assert.equal(answer.handoff, false);
    assert.match(answer.cause!, /matched by words only/);
  });
});
