import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../src/main/store/db.ts';
import { kbQueries } from '../src/main/store/kb.ts';
import { createOpenAiEngine, DEFAULT_SYSTEM_PROMPT, type OpenAiEngineConfig } from '../src/main/engines/openai-engine.ts';
import { createIndexedKnowledge } from '../src/main/engines/kb-index.ts';
import type { ContextLine, EngineRequest } from '../src/main/engines/engine.ts';
import { startFakeOpenAi } from './helpers/fake-openai.ts';
import { driveClock } from './helpers/drive-clock.ts';
import { askEngine, EngineTimeout } from '../src/main/engines/ask.ts';
import { manualClock } from '../src/shared/clock.ts';

const line = (role: ContextLine['role'], content: string, speaker: string | null = null): ContextLine => ({ role, speaker, content, at: 0 });
const request = (context: ContextLine[], isGroup = false): EngineRequest => ({ purpose: 'auto_reply', channel: 'im', isGroup, context, fallbackText: 'A colleague will reply.' });

describe('OpenAI-compatible engine against a local server', () => {
  let fake: Awaited<ReturnType<typeof startFakeOpenAi>>;
  const kb = kbQueries(openDatabase(':memory:'));
  kb.add('How much does the Pro plan cost?', 'Pro is $12 per user per month.', 0);
  kb.add('How do I reset my password?', 'Settings > Security > Reset password.', 0);
  const waits: number[] = [];
  const engine = (over: Partial<OpenAiEngineConfig> = {}, sleep: ((ms: number) => Promise<void>) | null = async (ms) => void waits.push(ms)) =>
    createOpenAiEngine(
      {
        name: 'local',
        baseUrl: fake.baseUrl,
        model: 'llama3.1:8b',
        apiKey: 'sk-test-SECRET-0123456789',
        systemPrompt: DEFAULT_SYSTEM_PROMPT,
        temperature: 0.2,
        maxTokens: 300,
        timeoutMs: 500,
        contextTokens: 2000,
        handoffMarker: '[[HANDOFF]]',
        groundingEntries: 2,
        retries: 2,
        ...over,
      },
      { knowledge: createIndexedKnowledge(kb), ...(sleep ? { sleep } : {}) },
    );
  const signal = new AbortController().signal;

  before(async () => {
    fake = await startFakeOpenAi();
  });
  after(() => fake.close());

  it('a suggestion\'s instruction from the agent reaches the model as a last system line', async () => {
    fake.respond = () => ({ body: { choices: [{ message: { content: 'Sure, a refund is on its way.' } }] } });
    await engine().answer({ ...request([line('customer', 'my order arrived broken')]), purpose: 'suggestion', instruction: 'offer a refund, be brief' }, signal);
    const messages = fake.calls.at(-1)!.body.messages;
    assert.deepEqual(messages.at(-1), { role: 'system', content: 'Instruction from the support agent for this answer: offer a refund, be brief' });
    assert.deepEqual(messages.at(-2), { role: 'user', content: 'my order arrived broken' });
    await engine().answer(request([line('customer', 'hello')]), signal);
    assert.equal(fake.calls.at(-1)!.body.messages.filter((m) => m.role === 'system').length, 1, 'no instruction, no extra line');
  });

  it('sends roles, speaker names in groups, grounding from the knowledge base, the model and the key', async () => {
    fake.respond = () => ({ body: { choices: [{ message: { content: 'Pro is $12 per user per month.' } }] } });
    const a = await engine().answer(
      request([line('customer', 'hi', 'u1'), line('ai', 'Hello! How can I help?'), line('staff', 'one moment', 'agent-7'), line('customer', 'How much is the Pro plan?', 'u2')], true),
      signal,
    );
    assert.deepEqual({ content: a.content, handoff: a.handoff }, { content: 'Pro is $12 per user per month.', handoff: false });
    const call = fake.calls.at(-1)!;
    assert.equal(call.headers['authorization'], 'Bearer sk-test-SECRET-0123456789');
    assert.equal(call.body.model, 'llama3.1:8b');
    assert.equal(call.body.temperature, 0.2);
    assert.equal(call.body.max_tokens, 300);
    const [system, ...rest] = call.body.messages;
    assert.equal(system!.role, 'system');
    assert.match(system!.content, /Knowledge base:[\s\S]*Q: How much does the Pro plan cost\?\nA: Pro is \$12/);
    assert.match(system!.content, /\[\[HANDOFF\]\]/);
    assert.deepEqual(rest, [
      { role: 'user', content: 'u1: hi' },
      { role: 'assistant', content: 'Hello! How can I help?' },
      { role: 'assistant', content: '[staff agent-7] one moment' },
      { role: 'user', content: 'u2: How much is the Pro plan?' },
    ]);
    assert.equal(a.sources[0]?.id, 1, 'the reply records which entries grounded it');
  });

  it('names people by nickname in groups and 1:1 (never by a bare id in 1:1), and says what a line quoted', async () => {
    fake.respond = () => ({ body: { choices: [{ message: { content: 'Yes, on Sundays too.' } }] } });
    const named = (role: ContextLine['role'], content: string, speakerName: string): ContextLine => ({ ...line(role, content, speakerName), speakerName });
    const quoting: ContextLine = { ...named('customer', 'so, yes?', 'Mia'), quoted: { speaker: 'Mia', content: 'Do you deliver on Sundays?' } };
    await engine().answer(request([line('customer', 'hello', 'wxid_8g2k'), named('customer', 'Do you deliver on Sundays?', 'Mia'), quoting]), signal);
    assert.deepEqual(fake.calls.at(-1)!.body.messages.slice(1).map((m) => m.content), [
      'hello',
      'Mia: Do you deliver on Sundays?',
      'Mia: [quoting Mia: "Do you deliver on Sundays?"] so, yes?',
    ]);
    await engine().answer(request([named('customer', 'the printer jams', 'Nora'), { ...line('staff', 'which floor?', 'Kim'), quoted: { speaker: 'Nora', content: 'the printer jams' } }], true), signal);
    assert.deepEqual(fake.calls.at(-1)!.body.messages.slice(1).map((m) => m.content), ['Nora: the printer jams', '[staff Kim] [quoting Nora: "the printer jams"] which floor?']);
  });

  it('trims the context to its token budget, keeping the newest lines', async () => {
    fake.respond = () => ({ body: { choices: [{ message: { content: 'ok' } }] } });
    const context = Array.from({ length: 200 }, (_, i) => line('customer', `message number ${i} ${'x'.repeat(80)}`));
    await engine({ contextTokens: 200 }).answer(request(context), signal);
    const sent = fake.calls.at(-1)!.body.messages.slice(1);
    assert.ok(sent.length < 20 && sent.length > 3, `${sent.length} lines kept`);
    assert.match(sent.at(-1)!.content, /message number 199/);
    assert.match(sent[0]!.content, new RegExp(`message number ${200 - sent.length} `));
  });

  it('retries 429 with backoff (honouring Retry-After), then answers', async () => {
    waits.length = 0;
    fake.respond = (_c, i) => (i % 2 === 0 ? { status: 429, headers: { 'retry-after': '2' } } : { body: { choices: [{ message: { content: 'after a wait' } }] } });
    const before = fake.calls.length;
    const a = await engine().answer(request([line('customer', 'hello')]), signal);
    assert.equal(a.content, 'after a wait');
    assert.equal(fake.calls.length - before, 2);
    assert.deepEqual(waits, [2000]);
  });

  it('500s until the retries run out: a handoff with the cause, never an exception', async () => {
    waits.length = 0;
    fake.respond = () => ({ status: 500 });
    const a = await engine().answer(request([line('customer', 'hello')]), signal);
    assert.equal(a.handoff, true);
    assert.equal(a.content, 'A colleague will reply.');
    assert.match(a.cause ?? '', /HTTP 500 after 3 attempts/);
    assert.deepEqual(waits, [500, 1000], 'exponential backoff');
  });

  it('a model that does not answer in time is a handoff', async () => {
    fake.respond = () => ({ delayMs: 2000, body: {} });
    const a = await engine({ timeoutMs: 100, retries: 0 }).answer(request([line('customer', 'hello')]), signal);
    assert.equal(a.handoff, true);
    assert.match(a.cause ?? '', /no answer within 100 ms/);
  });

  it('malformed answers, a 4xx, and the handoff marker are handoffs with their cause', async () => {
    const scripted: Array<[() => { status?: number; raw?: string; body?: unknown }, RegExp]> = [
      [() => ({ raw: '<html>oops' }), /not JSON/],
      [() => ({ body: { choices: [] } }), /no choices\[0\]\.message\.content/],
      [() => ({ status: 404, body: { error: 'model not found' } }), /HTTP 404 \(check the model name/],
      [() => ({ body: { choices: [{ message: { content: 'Sorry. [[HANDOFF]]' } }] } }), /the model said it cannot answer/],
    ];
    for (const [respond, cause] of scripted) {
      fake.respond = respond;
      const a = await engine().answer(request([line('customer', 'hello')]), signal);
      assert.equal(a.handoff, true);
      assert.match(a.cause ?? '', cause);
    }
  });

  it('a custom system prompt still carries the handoff instruction with the configured marker', async () => {
    fake.respond = () => ({ body: { choices: [{ message: { content: 'Arr.' } }] } });
    await engine({ systemPrompt: 'You are a pirate. Answer like one.', handoffMarker: '<<HUMAN>>' }).answer(request([line('customer', 'hello')]), signal);
    const system = fake.calls.at(-1)!.body.messages[0]!.content;
    assert.match(system, /^You are a pirate\. Answer like one\./);
    assert.match(system, /If you cannot answer confidently, reply with exactly <<HUMAN>> and nothing else\./);
    await engine().answer(request([line('customer', 'hello')]), signal);
    assert.equal(fake.calls.at(-1)!.body.messages[0]!.content.match(/reply with exactly \[\[HANDOFF\]\]/g)?.length, 1, 'the default prompt says it once');
  });

  it('a retry whose back-off would not fit the remaining budget is not made', async () => {
    waits.length = 0;
    const clock = manualClock(0);
    fake.respond = () => ({ status: 503 });
    const before = fake.calls.length;
    // Back-offs 500, 1000, 2000...: after 1,500 ms of waiting only 500 ms of the 2,000 ms budget are left.
    const e = engine({ retries: 5 }, async (ms) => {
      waits.push(ms);
      clock.advance(ms);
    });
    const a = await askEngine(e, request([line('customer', 'hello')]), 2000, clock);
    assert.equal(fake.calls.length - before, 3);
    assert.deepEqual(waits, [500, 1000]);
    assert.equal(a.handoff, true);
    assert.match(a.cause ?? '', /HTTP 503 after 3 attempts; a retry in 2000 ms would not fit the 2000 ms engine budget/);
  });

  it('a Retry-After longer than the remaining budget ends the retries at once', async () => {
    waits.length = 0;
    fake.respond = () => ({ status: 429, headers: { 'retry-after': '10' } });
    const before = fake.calls.length;
    const a = await askEngine(engine(), request([line('customer', 'hello')]), 5000, manualClock(0));
    assert.equal(fake.calls.length - before, 1);
    assert.deepEqual(waits, []);
    assert.match(a.cause ?? '', /HTTP 429; a retry in 10000 ms would not fit/);
  });

  it('a hung model with the default settings: attempts are cut to the budget, which ends in EngineTimeout at 30 s', async () => {
    const clock = manualClock(0);
    const started: number[] = [];
    fake.respond = () => (started.push(clock.now()), { delayMs: 3_600_000, body: {} });
    const before = fake.calls.length;
    // Defaults: 20 s per attempt, 2 retries; the overall budget is 30 s. Waits run on the budget clock.
    const e = engine({ timeoutMs: 20_000, retries: 2 }, null);
    const { result, elapsedMs } = await driveClock(clock, askEngine(e, request([line('customer', 'hello')]), 30_000, clock), { stepMs: 100 });
    assert.equal(result.status, 'rejected');
    const reason = (result as PromiseRejectedResult).reason as Error;
    assert.ok(reason instanceof EngineTimeout, String(reason));
    assert.match(reason.message, /^engine local timed out: no answer within 30000 ms/);
    assert.ok(elapsedMs >= 30_000 && elapsedMs <= 30_100, `gave up at ${elapsedMs} ms`);
    assert.equal(fake.calls.length - before, 2, 'a first 20 s attempt, then one cut to the 9.5 s left');
    assert.ok(started[1]! >= 20_500 && started[1]! < 22_000, `second attempt at ${started[1]} ms, after the 500 ms back-off`);
  });

  it('per-attempt time-outs that leave room retry inside the budget and end as a handoff', async () => {
    const clock = manualClock(0);
    fake.respond = () => ({ delayMs: 3_600_000, body: {} });
    const before = fake.calls.length;
    const e = engine({ timeoutMs: 5000, retries: 2 }, null);
    const { result, elapsedMs } = await driveClock(clock, askEngine(e, request([line('customer', 'hello')]), 30_000, clock), { stepMs: 100 });
    assert.equal(result.status, 'fulfilled');
    const a = (result as PromiseFulfilledResult<Awaited<ReturnType<typeof askEngine>>>).value;
    assert.equal(a.handoff, true);
    assert.match(a.cause ?? '', /engine local: timed out, no answer within 5000 ms after 3 attempts/);
    assert.equal(fake.calls.length - before, 3);
    assert.ok(elapsedMs >= 16_500 && elapsedMs < 17_500, `handed off at ${elapsedMs} ms (3 x 5 s + 0.5 s + 1 s of back-off)`);
  });
});
