import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from './helpers/postgres.ts';
import { eventually } from './helpers/receiver.ts';
import { addPgClient, createInstallationDatabase, post } from './helpers/pg-node.ts';
import { keyFileBox } from '../src/main/auth/secret-box.ts';
import { serverConfigSchema } from '../src/main/config/server-config.ts';
import { engineConfigSchema } from '../src/shared/engine-config.ts';
import { startPgService, type RunningPgService } from '../src/main/pg-service.ts';
import { startFakeEmbeddings, type FakeEmbeddings, SEMANTIC_ENTRIES, SEMANTIC_PARAPHRASE } from '../src/main/engines/embeddings/fake-embeddings.fixture.ts';
import { textHash } from '../src/main/engines/embeddings/vector-math.ts';

const MODEL = 'fake-embed';
const SECRET = 'pg-semantic-secret-0123456789';
type Reply = { content: string; handoff: boolean };

/**
 * Matching by meaning on PostgreSQL nodes (issue 30): a client whose engine names an embedding
 * model is answered by meaning on any node, and the knowledge base's vectors, which every node
 * may compute, are computed and stored once per text and model when the nodes take turns.
 */
describe('matching by meaning on PostgreSQL nodes', { skip: postgresSkipReason(), timeout: 120_000 }, () => {
  let server: PgServer;
  let fake: FakeEmbeddings;
  let db: pg.Client;
  const nodes: RunningPgService[] = [];

  const ask = async (node: RunningPgService, content: string): Promise<Reply> => {
    const r = await post(node.endpointUrl, 'shop', SECRET, { event_type: 'website_dialog', msg_id: `m-${Math.random()}`, from_user_id: 'visitor', content });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const said = r.json['reply'] as Reply;
    return { content: said.content, handoff: said.handoff };
  };
  const stored = async (): Promise<Array<{ entry_id: string; text_hash: string }>> => (await db.query('SELECT entry_id, text_hash FROM kb_vectors WHERE model = $1 ORDER BY entry_id, text_hash', [MODEL])).rows;
  /** How often the embeddings server was given this text (by any node). */
  const embedded = (text: string): number => fake.inputs().filter((t) => t === text).length;

  before(async () => {
    server = await startPostgres();
    fake = await startFakeEmbeddings();
    const storeUrl = await createInstallationDatabase(server.url);
    const keyFile = join(mkdtempSync(join(tmpdir(), 'sb-pg-semantic-')), 'shared.key');
    const box = keyFileBox(keyFile);
    box.seal('make the key file');
    const config = serverConfigSchema.parse({ port: 0, host: '127.0.0.1' });
    for (const n of ['a', 'b']) nodes.push(await startPgService({ config, storeUrl, secretBox: box, nodeId: `node-${n}`, log: () => {} }));
    db = new pg.Client({ connectionString: storeUrl });
    await db.connect();
    for (const [q, a] of SEMANTIC_ENTRIES) await db.query("INSERT INTO kb_entries (question, answer, phrasings, created_at, updated_at) VALUES ($1, $2, '[]', 1, 1)", [q, a]);
    await db.query("INSERT INTO engines (name, kind, config, api_key_sealed, created_at, updated_at) VALUES ('meaning', 'openai', $1, NULL, 1, 1)", [
      JSON.stringify(engineConfigSchema.parse({ baseUrl: fake.baseUrl, embeddingModel: MODEL, answerFrom: 'kb' })),
    ]);
    // Added after the nodes started: each reads the clients again for one it does not know (the mirror, and the knowledge base with it).
    await addPgClient(storeUrl, keyFile, 'shop', SECRET, { engine: 'meaning' });
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await db?.end();
    await fake?.close();
    await server?.stop();
  });

  it('answers a paraphrase by meaning; a second node takes the vectors the first stored and embeds only the question', async () => {
    const [a, b] = nodes as [RunningPgService, RunningPgService];
    // The first question starts the vectors' refresh on node A and does not wait for it.
    assert.equal((await ask(a, SEMANTIC_PARAPHRASE)).handoff, true);
    await eventually(async () => (await stored()).length === SEMANTIC_ENTRIES.length, 'the entries\' vectors stored', 10_000);
    assert.deepEqual(await ask(a, SEMANTIC_PARAPHRASE), { content: 'Standard delivery takes 3 to 5 business days.', handoff: false });
    // Node B's very first question is answered by meaning: it read the stored vectors (one query) before ranking.
    const inputs = fake.inputs().length;
    assert.deepEqual(await ask(b, SEMANTIC_PARAPHRASE), { content: 'Standard delivery takes 3 to 5 business days.', handoff: false });
    // The question is its conversation's recent messages (the same paraphrase, asked thrice now).
    assert.deepEqual([...new Set(fake.inputs().slice(inputs))], [SEMANTIC_PARAPHRASE], 'node B embedded the question only');
    for (const [q] of SEMANTIC_ENTRIES) assert.equal(embedded(q), 1, `"${q}" embedded once`);
  });

  it('an entry edited anywhere gets its new vectors from one node; the other takes them instead of computing them again', async () => {
    const [a, b] = nodes as [RunningPgService, RunningPgService];
    const id = (await db.query("SELECT id FROM kb_entries WHERE question = 'Where is my order?'")).rows[0].id as string;
    await db.query("UPDATE kb_entries SET question = 'Where is my package?', answer = 'Track it under Orders > Shipments.', phrasings = '[\"track my shipment\"]' WHERE id = $1", [id]);
    const edited = [textHash('Where is my package?'), textHash('track my shipment')].sort();
    // Node A sees the edit within its mirror's second; a question then starts the refresh.
    await eventually(async () => {
      await ask(a, 'hello');
      const rows = (await stored()).filter((r) => r.entry_id === id).map((r) => r.text_hash).sort();
      return JSON.stringify(rows) === JSON.stringify(edited);
    }, 'the edited entry\'s vectors, from node A', 10_000);
    // Node B, whose vectors were loaded before the edit, answers the edited entry by meaning, with A's vectors.
    const answer = await eventually(async () => {
      const r = await ask(b, 'status of my parcel');
      return r.content === 'Track it under Orders > Shipments.' && r;
    }, 'node B answering by the edited entry\'s meaning', 10_000);
    assert.equal(answer.handoff, false);
    assert.equal(embedded('Where is my package?'), 1, 'the edited question embedded by one node only');
    assert.equal(embedded('track my shipment'), 1, 'the new phrasing embedded by one node only');
    const rows = await stored();
    assert.equal(rows.length, SEMANTIC_ENTRIES.length + 1, 'one row per text and model; the old question\'s is gone');
  });
});
