import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../store/db.ts';
import { createStore, type Store } from '../store/index.ts';
import { keyFileBox, type SecretBox } from '../auth/secret-box.ts';
import { enginesCommand, sqliteEnginesCliStore, type EngineFlags, type EnginesIo } from './engines-commands.ts';
import { UsageError } from './args.ts';
import { startFakeEmbeddings, type FakeEmbeddings } from '../engines/embeddings/fake-embeddings.fixture.ts';

describe('engines add/list/test with an embedding model', () => {
  let store: Store;
  let box: SecretBox;
  let fake: FakeEmbeddings;
  const io: EnginesIo = { env: { EMBED_KEY: 'sk-embed-0123456789' }, readStdin: async () => '', warn: () => {} };
  const run = (args: string[], flags: EngineFlags): Promise<string> => enginesCommand(sqliteEnginesCliStore(store), box, 0, args, flags, io);
  const refused = async (flags: EngineFlags, message: RegExp): Promise<void> => {
    await assert.rejects(run(['add', 'x'], flags), (e: Error) => e instanceof UsageError && message.test(e.message), JSON.stringify(flags));
  };

  before(async () => {
    fake = await startFakeEmbeddings();
    const dir = mkdtempSync(join(tmpdir(), 'sb-engines-embed-'));
    store = createStore(openDatabase(join(dir, 'switchboard.db')));
    box = keyFileBox(join(dir, 'secret.key'));
  });
  after(() => fake.close());

  it('refuses settings that cannot work, naming the flag', async () => {
    await refused({}, /^--model is required: the chat model that writes the answers \(unless answers come from the knowledge base, "kb"\)$/);
    await refused({ 'answer-from': 'kb' }, /^--embedding-model is required when answers come from the knowledge base \("kb"\)/);
    await refused({ 'answer-from': 'embeddings', 'embedding-model': 'm' }, /^--answer-from must be one of llm, kb, got "embeddings"$/);
    await refused({ model: 'm', 'embedding-model': 'e'.repeat(201) }, /^--embedding-model must be at most 200 characters$/);
    await refused({ 'answer-from': 'kb', 'embedding-model': 'nomic-embed-text', 'base-url': 'nope' }, /^--base-url must be an absolute URL \(http:\/\/host:port\/path\), got "nope"$/);
    assert.equal(store.engines.list().length, 0);
  });

  it('an engine answering from the knowledge base needs no chat model; an LLM engine gains and loses an embedding model', async () => {
    const added = await run(['add', 'meaning'], { 'answer-from': 'kb', 'embedding-model': 'nomic-embed-text', 'base-url': fake.baseUrl, 'api-key-env': 'EMBED_KEY' });
    assert.match(added, /^engine meaning added: answers from the knowledge base, embeddings nomic-embed-text at http:\/\/127\.0\.0\.1:\d+\/v1 \(API key stored encrypted\)/);
    assert.deepEqual([store.engines.get('meaning')!.config.model, store.engines.get('meaning')!.config.answerFrom], [undefined, 'kb']);
    await run(['add', 'writer'], { model: 'llama3.1:8b', 'embedding-model': 'nomic-embed-text' });
    assert.match(await run(['list'], {}), /writer\tllama3\.1:8b, embeddings nomic-embed-text\t/);
    // Back to an LLM engine without a chat model is refused; "" turns matching by meaning off.
    await assert.rejects(run(['add', 'meaning'], { 'answer-from': 'llm' }), /--model is required/);
    await run(['add', 'writer'], { 'embedding-model': '' });
    assert.equal(store.engines.get('writer')!.config.embeddingModel, undefined);
  });

  it('engines test probes the embedding model with the stored key, and fails clearly when it cannot', async () => {
    const out = await run(['test', 'meaning'], { question: 'where is my parcel' });
    assert.match(out, /engine meaning: embedding model nomic-embed-text answered in \d+ ms \(\d+ dimensions\)\nengine meaning answers from the knowledge base/);
    assert.equal(fake.calls.at(-1)!.headers.authorization, 'Bearer sk-embed-0123456789');
    assert.deepEqual(fake.calls.at(-1)!.body, { model: 'nomic-embed-text', input: ['where is my parcel'] });
    fake.respond = () => ({ status: 404, raw: '{"error":"model \\"nomic-embed-text\\" not found, try pulling it first"}' });
    await assert.rejects(run(['test', 'meaning'], {}), /^Error: engine meaning failed the embeddings probe: embeddings: HTTP 404 .*try pulling it first/);
  });
});
