import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from '../../../test/helpers/postgres.ts';
import { copyDatabase, urlOf } from '../../../test/helpers/pg-work-fixture.ts';
import { cliHereArgs, type HereOptions } from '../../../test/helpers/cli-here.ts';
import { startFakeOpenAi } from '../../../test/helpers/fake-openai.ts';
import type { CliResult } from '../../../test/helpers/processes.ts';
import { startFakeEmbeddings, type FakeEmbeddings } from '../engines/embeddings/fake-embeddings.fixture.ts';
import { keyFileBox } from '../auth/secret-box.ts';
import { createStore } from '../store/index.ts';
import { openDatabase } from '../store/db.ts';
import { databasePath } from '../store/data-dir.ts';
import { migratePg } from '../store/pg/migrate.ts';
import { pgEnginesCliStore } from '../store/pg/engine-cli-queries.ts';

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5);
const ENV_KEY = 'sk-env-0123456789abcdef';
const STDIN_KEY = 'sk-stdin-fedcba9876543210';

type Step = { args: string[]; options?: HereOptions };

/** The same engines commands, in order (chat and embeddings at the fakes' URLs); errors included. */
function sequence(chat: string, embeddings: string): Step[] {
  const s = (...args: string[]): Step => ({ args });
  return [
    s('engines', 'list'),
    s('kb', 'add', '--question', 'How do I reset my password?', '--answer', 'Use the reset link on the sign-in page.'),
    { args: ['engines', 'add', 'gpt', '--base-url', chat, '--model', 'llama3.1:8b', '--api-key-env', 'CHAT_KEY'], options: { env: { CHAT_KEY: ENV_KEY } } },
    // Byte order ("a-b" "a1" "a_b") differs from a linguistic one ("a_b" "a-b" "a1").
    s('engines', 'add', 'a_b', '--model', 'm', '--base-url', chat),
    s('engines', 'add', 'a-b', '--model', 'm', '--base-url', chat, '--temperature', '0.7', '--max-tokens', '300', '--grounding', '2', '--system-prompt', 'Be brief.'),
    s('engines', 'add', 'a1', '--model', 'm', '--base-url', chat),
    s('engines', 'add', 'meaning', '--answer-from', 'kb', '--embedding-model', 'nomic-embed-text', '--base-url', embeddings),
    s('engines', 'list'),
    // An update keeps the stored key; a new key from standard input replaces it.
    s('engines', 'add', 'gpt', '--temperature', '0.2', '--embedding-model', 'nomic-embed-text'),
    s('engines', 'add', 'gpt', '--embedding-model', ''),
    s('engines', 'list'),
    { args: ['engines', 'add', 'gpt', '--api-key-stdin'], options: { input: `  ${STDIN_KEY}\n` } },
    s('engines', 'list'),
    s('engines', 'test', 'gpt', '--question', 'how do I reset my password'),
    s('engines', 'test', 'meaning', '--question', 'where is my parcel'),
    s('clients', 'add', 'shop', '--engine', 'gpt', '--secret', 'a-chosen-secret-of-forty-characters-0001'),
    s('clients', 'add', 'x', '--engine', 'nope'),
    s('engines', 'remove', 'a1'),
    s('engines', 'list'),
    // The operator's mistakes: the same messages and exit statuses.
    s('engines', 'remove', 'a1'),
    s('engines', 'remove'),
    s('engines', 'test', 'ghost'),
    s('engines', 'test'),
    s('engines', 'add', 'Bad'),
    s('engines', 'add', 'kb', '--model', 'm'),
    s('engines', 'add', 'x'),
    s('engines', 'add', 'x', '--model', 'm', '--temperature', 'warm'),
    s('engines', 'add', 'x', '--model', 'm', '--base-url', 'nope'),
    s('engines', 'add', 'x', '--model', 'm', '--api-key-env', 'NO_SUCH_VARIABLE_HERE'),
    s('engines', 'add', 'x', '--model', 'm', '--api-key', 'k1', '--api-key-stdin'),
    s('engines', 'add', 'x', '--model', 'm', '--api-key-stdin'),
    s('engines', 'frobnicate'),
    s('engines', 'list'),
  ];
}

/** Probe times differ from run to run: nothing else may. */
const steady = (r: CliResult): CliResult => ({ ...r, stdout: r.stdout.replace(/in \d+ ms/g, 'in N ms') });

describe('engines commands on SQLite and on PostgreSQL', { skip: postgresSkipReason() }, () => {
  let server: PgServer;
  let chat: Awaited<ReturnType<typeof startFakeOpenAi>>;
  let embeddings: FakeEmbeddings;
  before(async () => {
    [server, chat, embeddings] = await Promise.all([startPostgres(), startFakeOpenAi(), startFakeEmbeddings()]);
    // A linguistic collation (ICU's root), as a database made with en_US.UTF-8 has: lists must still sort by bytes, as SQLite's.
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query("CREATE DATABASE engines_template TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'und' LOCALE 'C.UTF-8'");
    await admin.end();
    const db = new pg.Client({ connectionString: urlOf(server.url, 'engines_template') });
    await db.connect();
    await migratePg(db);
    await db.end();
  });
  after(async () => {
    await Promise.all([server?.stop(), chat?.close(), embeddings?.close()]);
  });

  it('prints the same for the same commands, errors included; PostgreSQL keeps config as jsonb and the API key sealed with the shared key', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-engines-both-'));
    const keyFile = join(dataDir, 'shared.key');
    keyFileBox(keyFile).seal('make the key file');
    const url = await copyDatabase(server.url, 'engines_template', 'engines_1');
    let now = T0;
    const clock = () => now;
    const steps = sequence(chat.baseUrl, embeddings.baseUrl);
    for (const { args, options } of steps) {
      now += 60_000;
      const common = [...args, '--data-dir', dataDir, '--secret-key-file', keyFile];
      const calls = chat.calls.length;
      const onSqlite = steady(await cliHereArgs(common, { ...options, nowMs: clock }));
      const onPostgres = steady(await cliHereArgs([...common, '--store', url], { ...options, nowMs: clock }));
      assert.deepEqual(onPostgres, onSqlite, args.join(' '));
      if (args[1] === 'test' && args[2] === 'gpt') {
        // Each store's probe: its own stored key opened, its own knowledge base as grounding.
        assert.equal(chat.calls.length, calls + 2);
        for (const call of chat.calls.slice(calls)) {
          assert.equal(call.headers.authorization, `Bearer ${STDIN_KEY}`);
          assert.deepEqual([call.body.model, call.body.temperature], ['llama3.1:8b', 0.2]);
          assert.match(call.body.messages[0]!.content, /Q: How do I reset my password\?\nA: Use the reset link on the sign-in page\./);
        }
      }
    }

    // The sequence says something: a few of its outputs, as both stores printed them.
    const run = (...args: string[]) => cliHereArgs([...args, '--data-dir', dataDir, '--secret-key-file', keyFile, '--store', url]);
    assert.deepEqual((await run('engines', 'list')).stdout.split('\n').map((l) => l.split('\t')[0]), ['kb', 'a-b', 'a_b', 'gpt', 'meaning', ''], 'byte order, as SQLite sorts');
    assert.match((await run('engines', 'list')).stdout, /^gpt\tllama3\.1:8b\thttp:\/\/127\.0\.0\.1:\d+\/v1\tkey: set$/m);
    assert.match((await run('engines', 'test', 'meaning')).stdout, /^engine meaning: embedding model nomic-embed-text answered in \d+ ms \(\d+ dimensions\)$/m);
    assert.equal(embeddings.calls.at(-1)!.headers.authorization, undefined, 'no key stored for meaning');
    const refused = await run('clients', 'add', 'x', '--engine', 'nope');
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /--engine must be one of kb, a-b, a_b, gpt, meaning, got "nope"/);
    const gone = await run('engines', 'remove', 'a1');
    assert.deepEqual([gone.status, gone.stderr.split('\n')[0]], [2, 'error: no engine "a1"']);
    const leaked = await cliHereArgs(['engines', 'add', 'gpt', '--api-key', 'sk-on-the-command-line', '--data-dir', dataDir, '--store', url, '--secret-key-file', keyFile], { nowMs: clock });
    assert.match(leaked.stderr, /^warning: --api-key puts the key on the command line/);

    const db = new pg.Client({ connectionString: url });
    await db.connect();
    const rows = (await db.query("SELECT name, api_key_sealed, jsonb_typeof(config) AS t, config->>'temperature' AS temperature, created_at, updated_at FROM engines ORDER BY name COLLATE \"C\"")).rows as Array<{ name: string; api_key_sealed: string | null; t: string; temperature: string | null; created_at: string; updated_at: string }>;
    await db.end();
    assert.deepEqual(rows.map((r) => [r.name, r.t, r.api_key_sealed === null ? 'no key' : 'key']), [['a-b', 'object', 'no key'], ['a_b', 'object', 'no key'], ['gpt', 'object', 'key'], ['meaning', 'object', 'no key']], 'config is a jsonb object, not a string in one');
    const gpt = rows.find((r) => r.name === 'gpt')!;
    assert.equal(gpt.temperature, '0.2');
    assert.equal(Number(gpt.created_at), T0 + 3 * 60_000, 'an update keeps the row\'s creation time');
    const box = keyFileBox(keyFile);
    assert.equal(box.open(gpt.api_key_sealed!), 'sk-on-the-command-line', 'sealed with the key every node shares');
    assert.ok(!gpt.api_key_sealed!.includes('sk-'));
    // And SQLite agrees on the settings the sequence left.
    const sqlite = createStore(openDatabase(databasePath(dataDir)));
    try {
      assert.deepEqual(sqlite.engines.list().map((e) => e.name), ['a-b', 'a_b', 'gpt', 'meaning']);
      assert.equal(box.open(sqlite.engines.get('gpt')!.apiKeySealed!), STDIN_KEY);
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      try {
        const onPg = await pgEnginesCliStore(pool).engines.get('a-b');
        assert.deepEqual(onPg?.config, sqlite.engines.get('a-b')!.config);
        const { baseUrl, model, temperature, maxTokens, groundingEntries, systemPrompt } = onPg!.config;
        assert.deepEqual({ baseUrl, model, temperature, maxTokens, groundingEntries, systemPrompt }, { baseUrl: chat.baseUrl, model: 'm', temperature: 0.7, maxTokens: 300, groundingEntries: 2, systemPrompt: 'Be brief.' });
      } finally {
        await pool.end();
      }
    } finally {
      sqlite.close();
    }
  });
});
