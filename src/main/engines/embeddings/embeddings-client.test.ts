import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createEmbeddingsClient, type EmbeddingsConfig } from './embeddings-client.ts';
import { EmbeddingsError } from './embeddings-error.ts';
import { dot } from './vector-math.ts';
import { startFakeEmbeddings, fakeEmbedding, type FakeEmbeddings } from './fake-embeddings.fixture.ts';

describe('the embeddings client (OpenAI-compatible POST /embeddings)', () => {
  let fake: FakeEmbeddings;
  const waits: number[] = [];
  const client = (over: Partial<EmbeddingsConfig> = {}) =>
    createEmbeddingsClient(
      { baseUrl: fake.baseUrl, model: 'nomic-embed-text', apiKey: 'sk-test', timeoutMs: 5000, retries: 2, batchSize: 32, ...over },
      { sleep: async (ms) => void waits.push(ms) },
    );
  const signal = new AbortController().signal;
  before(async () => (fake = await startFakeEmbeddings()));
  after(() => fake.close());
  const reset = (): void => {
    fake.calls.length = 0;
    waits.length = 0;
    fake.respond = () => null;
  };

  it('sends the texts in batches, with the model and key, and gives unit vectors in input order', async () => {
    reset();
    const texts = Array.from({ length: 70 }, (_, i) => `where is parcel ${i}`);
    // The server answers each batch in reverse order: the index says which input a vector is for.
    fake.respond = (call) => ({ body: { data: call.body.input.map((t, index) => ({ index, embedding: fakeEmbedding(t) })).reverse() } });
    const vectors = await client().embed(['my package', ...texts, 'reset my password'], signal);
    assert.deepEqual(fake.calls.map((c) => c.body.input.length), [32, 32, 8]);
    assert.equal(fake.calls[0]!.body.model, 'nomic-embed-text');
    assert.equal(fake.calls[0]!.headers.authorization, 'Bearer sk-test');
    assert.equal(vectors.length, 72);
    for (const v of vectors) assert.ok(Math.abs(dot(v, v) - 1) < 1e-5, 'unit length');
    assert.ok(dot(vectors[0]!, vectors[1]!) > 0.6, 'the package is close to a parcel');
    assert.ok(dot(vectors[0]!, vectors[71]!) < 0.2, 'and far from a password');
  });

  it('retries a 429 (after its Retry-After) and a 503 with back-off, then answers', async () => {
    reset();
    fake.respond = (_, i) => (i === 0 ? { status: 429, headers: { 'retry-after': '2' } } : i === 1 ? { status: 503, raw: 'loading model' } : null);
    const [v] = await client().embed(['parcel'], signal);
    assert.equal(v!.length, fakeEmbedding('x').length);
    assert.deepEqual(waits, [2000, 1000]);
  });

  it('gives up after its retries, saying what the server said', async () => {
    reset();
    fake.respond = () => ({ status: 500, raw: 'CUDA out of memory' });
    await assert.rejects(client({ retries: 1 }).embed(['x'], signal), (e: EmbeddingsError) => e.failure === 'http' && /HTTP 500 \(CUDA out of memory\) \(after 2 attempts\)/.test(e.message));
  });

  it('a refused key, a wrong model and a non-JSON answer fail at once with a clear error', async () => {
    reset();
    fake.respond = () => ({ status: 401, raw: '{"error":"bad key"}' });
    await assert.rejects(client().embed(['x'], signal), (e: EmbeddingsError) => e.failure === 'auth' && /HTTP 401, the API key was refused/.test(e.message) && !e.message.includes('sk-test'));
    fake.respond = () => ({ status: 404, raw: '{"error":"model \\"nomic-embed-text\\" not found, try pulling it first"}' });
    await assert.rejects(client().embed(['x'], signal), /HTTP 404 .*check the base URL and that model "nomic-embed-text" is there.*try pulling it first/);
    fake.respond = () => ({ raw: '<html>proxy login</html>' });
    await assert.rejects(client().embed(['x'], signal), (e: EmbeddingsError) => e.failure === 'malformed' && /not JSON \(<html>proxy login<\/html>\)/.test(e.message));
    assert.equal(fake.calls.length, 3, 'none of them retried');
  });

  it('refuses answers of the wrong shape: missing data, too few vectors, mixed or changing dimensions', async () => {
    reset();
    fake.respond = () => ({ body: { embeddings: [[1, 2]] } });
    await assert.rejects(client().embed(['x'], signal), (e: EmbeddingsError) => e.failure === 'malformed' && /no data\[\]\.embedding/.test(e.message));
    fake.respond = () => ({ body: { data: [{ index: 0, embedding: [1, 0] }] } });
    await assert.rejects(client().embed(['x', 'y'], signal), /1 vectors for 2 texts/);
    fake.respond = () => ({ body: { data: [{ index: 0, embedding: [1, 0] }, { index: 1, embedding: [1, 0, 0] }] } });
    await assert.rejects(client().embed(['x', 'y'], signal), (e: EmbeddingsError) => e.failure === 'dims' && /2 and 3 dimensions/.test(e.message));
    const first = fake.calls.length;
    fake.respond = (call, i) => ({ body: { data: call.body.input.map((_, index) => ({ index, embedding: i === first ? [1, 0] : [1, 0, 0] })) } });
    await assert.rejects(client({ batchSize: 1 }).embed(['x', 'y'], signal), (e: EmbeddingsError) => e.failure === 'dims');
  });

  it('a slow server times out, and an abort ends the request at once', async () => {
    reset();
    fake.respond = () => ({ delayMs: 60_000 });
    await assert.rejects(client({ timeoutMs: 100, retries: 0 }).embed(['x'], signal), (e: EmbeddingsError) => e.failure === 'timeout' && e.retryable);
    const controller = new AbortController();
    const pending = client({ retries: 0 }).embed(['x'], controller.signal);
    controller.abort();
    await assert.rejects(pending, (e: EmbeddingsError) => e.failure === 'aborted');
  });

  it('an endpoint that is down is unreachable (retryable), not a crash', async () => {
    const down = createEmbeddingsClient({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', apiKey: null, timeoutMs: 2000, retries: 0, batchSize: 8 });
    await assert.rejects(down.embed(['x'], signal), (e: EmbeddingsError) => e.failure === 'unreachable' && e.retryable && /cannot reach http:\/\/127\.0\.0\.1:1\/v1/.test(e.message));
  });
});
