import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../src/main/store/db.ts';
import { kbQueries } from '../src/main/store/kb.ts';
import { createOpenAiEngine, DEFAULT_SYSTEM_PROMPT, type OpenAiEngineConfig } from '../src/main/engines/openai-engine.ts';
import type { ContextLine, EngineRequest } from '../src/main/engines/engine.ts';
import { startFakeOpenAi } from './helpers/fake-openai.ts';

const line = (role: ContextLine['role'], content: string, speaker: string | null = null): ContextLine => ({ role, speaker, content, at: 0 });
const request = (context: ContextLine[], isGroup = false): EngineRequest => ({ purpose: 'auto_reply', channel: 'im', isGroup, context, fallbackText: 'A colleague will reply.' });

describe('OpenAI-compatible engine against a local server', () => {
  let fake: Awaited<ReturnType<typeof startFakeOpenAi>>;
  const kb = kbQueries(openDatabase(':memory:'));
  kb.add('How much does the Pro plan cost?', 'Pro is $12 per user per month.', 0);
  kb.add('How do I reset my password?', 'Settings > Security > Reset password.', 0);
  const waits: number[] = [];
  const engine = (over: Partial<OpenAiEngineConfig> = {}) =>
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
      { knowledge: kb, sleep: async (ms) => void waits.push(ms) },
    );
  const signal = new AbortController().signal;

  before(async () => {
    fake = await startFakeOpenAi();
  });
  after(() => fake.close());

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
});
