import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { eventually } from './helpers/receiver.ts';
import { engineConfigSchema } from '../src/shared/engine-config.ts';
import { startFakeEmbeddings, type FakeEmbeddings, SEMANTIC_ENTRIES, SEMANTIC_PARAPHRASE } from '../src/main/engines/embeddings/fake-embeddings.fixture.ts';
import { textHash } from '../src/main/engines/embeddings/vector-math.ts';

const ENTRIES = SEMANTIC_ENTRIES;
const PARAPHRASE = SEMANTIC_PARAPHRASE;
const MODEL = 'fake-embed';

type Reply = { content: string; handoff: boolean };

// The default configuration: the engine thread ranks and computes vectors; main stores them
// through the writer thread. In-process (engineWorker off), main does both, writes likewise.
for (const engineWorker of [true, false])
describe(`semantic matching where the user has an embedding model (issue 29), ${engineWorker ? 'on the engine thread' : 'in-process'}`, () => {
  let h: Harness;
  let fake: FakeEmbeddings;

  const ask = async (client: string, content: string): Promise<{ reply: Reply; conversationId: string }> => {
    const r = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: `v-${client}`, content }, { client });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const said = r.body['reply'] as Reply;
    return { reply: { content: said.content, handoff: said.handoff }, conversationId: String(r.body['conversation_id']) };
  };
  const vectorsStored = (n: number): Promise<true> => eventually(() => h.admin.kbVectors.count(MODEL) === n, `${n} vectors stored`, 10_000);

  before(async () => {
    fake = await startFakeEmbeddings();
    h = await startHarness({ config: { engineWorker } });
    for (const [q, a] of ENTRIES) h.admin.kb.add(q, a, 0);
    h.admin.engines.save('meaning', engineConfigSchema.parse({ baseUrl: fake.baseUrl, embeddingModel: MODEL, answerFrom: 'kb' }), null, Date.now());
    h.admin.engines.save('writer', engineConfigSchema.parse({ baseUrl: fake.baseUrl, model: 'chat-model', embeddingModel: MODEL, groundingEntries: 1 }), null, Date.now());
    h.addClient('semantic', { engine: 'meaning' } as never);
    h.addClient('llm', { engine: 'writer' } as never);
    h.addClient('plain', {});
  });
  after(async () => {
    await h.stop();
    await fake.close();
  });

  it('an engine answering from the knowledge base answers a paraphrase the built-in engine hands off', async () => {
    // The first question starts the vectors' refresh and does not wait for it.
    const first = await ask('semantic', PARAPHRASE);
    assert.equal(first.reply.handoff, true);
    await vectorsStored(ENTRIES.length);
    const { reply, conversationId } = await ask('semantic', PARAPHRASE);
    assert.deepEqual(reply, { content: 'Standard delivery takes 3 to 5 business days.', handoff: false });
    const t = await h.service.console.asOwner.getTranscript({ conversationId, limit: 50 });
    const stored = t.entries.filter((e) => e.kind === 'reply').at(-1)!;
    assert.equal(stored.engine, 'meaning');
    assert.equal(stored.sources?.[0]?.id, h.admin.kb.all().find((e) => e.question === 'How long does delivery take?')!.id);
    // The built-in engine stays lexical and offline.
    const calls = fake.calls.length;
    assert.equal((await ask('plain', PARAPHRASE)).reply.handoff, true);
    assert.equal(fake.calls.length, calls, 'the built-in engine asked no embedding model');
  });

  it('an LLM engine with an embedding model grounds its answer on the entry the paraphrase means', async () => {
    await vectorsStored(ENTRIES.length);
    const { reply } = await ask('llm', PARAPHRASE);
    assert.deepEqual(reply, { content: 'Written by the chat model.', handoff: false });
    const system = fake.chats.at(-1)!.messages[0]!.content;
    assert.match(system, /Q: How long does delivery take\?\nA: Standard delivery takes 3 to 5 business days\./);
  });

  it('an entry edited from another process gets its new vectors; the old text\'s are dropped', async () => {
    const id = h.admin.kb.all().find((e) => e.question === 'Where is my order?')!.id;
    h.admin.kb.update(id, 'Where is my package?', 'Open Orders to see the tracking link.', 1, ['track my shipment']);
    await ask('semantic', 'hello'); // the next question notices the change
    await eventually(() => {
      const hashes = h.admin.kbVectors.forModel(MODEL).filter((r) => r.entryId === id).map((r) => r.textHash).sort();
      return JSON.stringify(hashes) === JSON.stringify([textHash('Where is my package?'), textHash('track my shipment')].sort());
    }, 'the edited entry\'s vectors', 10_000);
  });

  it('the embedding model down: the answer comes from the words, with the cause in the trace', async () => {
    fake.respond = () => ({ status: 503, raw: 'model unloaded' });
    try {
      const { reply, conversationId } = await ask('semantic', 'How do I reset my password?');
      assert.deepEqual(reply, { content: 'Open Settings > Security > Reset password.', handoff: false });
      const t = await h.service.console.asOwner.getTranscript({ conversationId, limit: 50 });
      assert.match(t.entries.filter((e) => e.kind === 'reply').at(-1)!.cause ?? '', /matched by words only: embeddings failed: embeddings: HTTP 503 \(model unloaded\)/);
    } finally {
      fake.respond = () => null;
    }
  });

  it('a slow embedding model holds up no other client\'s answer', async () => {
    let arrived!: () => void;
    const embeddingAsked = new Promise<void>((r) => (arrived = r));
    fake.respond = (call) => {
      if (call.body.input.includes('What are your opening hours?')) arrived();
      return { delayMs: 60_000 };
    };
    try {
      // The breaker of the previous test is still open for this engine: the LLM one is asked.
      let slowDone = false;
      const slow = ask('llm', 'What are your opening hours?').then((r) => ((slowDone = true), r));
      await embeddingAsked;
      const quick = await ask('plain', 'What are your opening hours?');
      assert.deepEqual(quick.reply, { content: 'Monday to Friday, 9:00 to 18:00 CET.', handoff: false });
      assert.equal(slowDone, false, 'answered while the other waited on its embedding model');
      // In-process, the question's time-out runs on the service's (hand-moved) clock.
      if (!engineWorker) h.clock.advance(3500);
      const late = await slow;
      assert.equal(late.reply.handoff, false, 'the slow one is answered too, grounded by words');
    } finally {
      fake.respond = () => null;
    }
  });
});
