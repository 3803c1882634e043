import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { startFakeOpenAi } from './helpers/fake-openai.ts';
import { startReceiver, eventually, type Receiver } from './helpers/receiver.ts';
import { keyFileBox } from '../src/main/auth/secret-box.ts';
import { engineConfigSchema } from '../src/shared/engine-config.ts';
import { driveClock } from './helpers/drive-clock.ts';

const KEY = 'sk-worker-SECRET-KEY-0123456789abcdef';

// The default configuration: answers are computed on the engine thread with its own read-only
// connection. The main thread's knowledge base is booby-trapped, so any match made there fails.
describe('the engine worker answers off the main thread', () => {
  let h: Harness;
  let rx: Receiver;
  let fake: Awaited<ReturnType<typeof startFakeOpenAi>>;
  const logs: string[] = [];

  before(async () => {
    rx = await startReceiver();
    fake = await startFakeOpenAi();
    h = await startHarness({ log: (line) => logs.push(line) });
    const trap = (): never => {
      throw new Error('knowledge base matched on the main thread');
    };
    // Matching builds its index from every entry: on main, it would read them here.
    h.service.store.kb.all = trap;
    h.admin.kb.add('How do I reset my password?', 'Use the "Forgot password" link on the sign-in page.', 0);
    h.admin.engines.save('local', engineConfigSchema.parse({ baseUrl: fake.baseUrl, model: 'llama3.1:8b' }), keyFileBox(`${h.dataDir}/secret.key`).seal(KEY), Date.now());
    h.addClient('acme', { sendUrl: rx.url, boundAccount: 'bot-acme' });
    h.addClient('llmco', { engine: 'local' } as never);
  });
  after(async () => {
    await h.stop();
    await rx.close();
    await fake.close();
  });

  it('website_dialog is answered from the knowledge base', async () => {
    const r = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'v1', content: 'how can I reset my password' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const reply = r.body['reply'] as { content: string; handoff: boolean };
    assert.deepEqual({ content: reply.content, handoff: reply.handoff }, { content: 'Use the "Forgot password" link on the sign-in page.', handoff: false });
  });

  it('a knowledge-base edit counts at the next question (the engine thread matches in memory)', async () => {
    const ask = async (): Promise<{ content: string; handoff: boolean }> => {
      const r = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'v-edit', content: 'when do you deliver parcels on sunday' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const reply = r.body['reply'] as { content: string; handoff: boolean };
      return { content: reply.content, handoff: reply.handoff };
    };
    assert.equal((await ask()).handoff, true);
    const id = h.admin.kb.add('When do you deliver parcels on Sunday?', 'Sunday deliveries: 10:00 to 14:00.', 0);
    assert.deepEqual(await ask(), { content: 'Sunday deliveries: 10:00 to 14:00.', handoff: false });
    // Same time stamp and length: only the text differs.
    h.admin.kb.update(id, 'When do you deliver parcels on Sunday?', 'Sunday deliveries: 11:00 to 15:00.', 0);
    assert.deepEqual(await ask(), { content: 'Sunday deliveries: 11:00 to 15:00.', handoff: false });
    h.admin.kb.remove(id);
    assert.equal((await ask()).handoff, true);
  });

  it('an auto reply is composed there and delivered to the receiver', async () => {
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-1', from_user_type: 2, content: 'I need to reset my password' });
    h.clock.advance(2000);
    const [d] = await eventually(() => rx.received.length === 1 && rx.received, 'the delivery');
    assert.equal(d!.body.message_info['content'], 'Use the "Forgot password" link on the sign-in page.');
    assert.equal(d!.body.message_info['to_user_id'], 'cust-1');
  });

  it('an auto reply\'s transcript is read there too, not on the main thread (issue 10)', async () => {
    const context = h.service.store.messages.context;
    h.service.store.messages.context = () => {
      throw new Error('auto-reply context read on the main thread');
    };
    try {
      const before = rx.received.length;
      await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-ctx', from_user_type: 2, content: 'hello there' });
      await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-ctx', from_user_type: 2, content: 'how do I reset my password' });
      h.clock.advance(2000);
      const [d] = await eventually(() => rx.received.length === before + 1 && rx.received.slice(before), 'the delivery');
      assert.equal(d!.body.message_info['content'], 'Use the "Forgot password" link on the sign-in page.');
      assert.equal((d!.body.message_info['reply_to'] as unknown[]).length, 2);
    } finally {
      h.service.store.messages.context = context;
    }
  });

  it('an LLM engine answers there with its opened API key, grounded in the knowledge base', async () => {
    fake.respond = (call) => ({ body: { choices: [{ message: { content: `Model says: ${call.body.messages.at(-1)!.content}` } }] } });
    const r = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'v2', content: 'reset password?' }, { client: 'llmco' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((r.body['reply'] as { content: string }).content, 'Model says: reset password?');
    assert.equal(fake.calls.at(-1)!.headers['authorization'], `Bearer ${KEY}`);
    assert.match(fake.calls.at(-1)!.body.messages[0]!.content, /Forgot password/);
    const t = await h.service.console.asOwner.getTranscript({ conversationId: String(r.body['conversation_id']), limit: 50 });
    assert.equal(t.entries.find((e) => e.kind === 'reply')?.engine, 'local');
    assert.ok(!logs.join('\n').includes(KEY), 'the key is never logged');
  });

  it('an LLM auto reply composed there sees the transcript as in-process: earlier answers and the new question, in order', async () => {
    fake.respond = (call) => ({ body: { choices: [{ message: { content: `Model says: ${call.body.messages.at(-1)!.content}` } }] } });
    const ask = async (content: string): Promise<string> => {
      const before = fake.calls.length;
      const r = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-llm', from_user_type: 2, content, send_url: rx.url }, { client: 'llmco' });
      h.clock.advance(2000);
      await eventually(() => fake.calls.length === before + 1, 'the model asked');
      return String(r.body['conversation_id']);
    };
    const conversationId = await ask('where is my parcel');
    const first = fake.calls.at(-1)!;
    await eventually(() => h.admin.messages.context(conversationId, Number.MAX_SAFE_INTEGER, 50).some((e) => e.kind === 'reply'), 'the first reply stored');
    await ask('it was due yesterday');
    const lines = fake.calls.at(-1)!.body.messages.slice(1).map((m) => `${m.role}: ${m.content}`);
    assert.deepEqual(lines, ['user: where is my parcel', 'assistant: Model says: where is my parcel', 'user: it was due yesterday']);
    assert.deepEqual(first.body.messages.slice(1).map((m) => m.role), ['user']);
  });

  it('a hung engine there still hands off on the service clock: the caller\'s time-out wins over the abort', async () => {
    fake.respond = () => ({ delayMs: 3_600_000, body: {} });
    const { result } = await driveClock(h.clock, h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'v3', content: 'anyone?' }, { client: 'llmco' }));
    assert.equal(result.status, 'fulfilled');
    const r = (result as PromiseFulfilledResult<Awaited<ReturnType<typeof h.post>>>).value;
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((r.body['reply'] as { handoff: boolean }).handoff, true);
    const t = await h.service.console.asOwner.getTranscript({ conversationId: String(r.body['conversation_id']), limit: 50 });
    assert.match(t.entries.find((e) => e.kind === 'reply')?.cause ?? '', /^engine local timed out: no answer within 30000 ms/);
  });
});
