import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason } from '../../../../test/helpers/postgres.ts';
import { workNodes } from '../../../../test/helpers/pg-work-fixture.ts';
import { createConfigMirror } from './config-mirror.ts';
import { pgMessageReads } from './message-reads.ts';
import { restoreDueReplies } from './reply-queries.ts';
import { openPgPool } from './pool.ts';
import { createClientRegistry } from '../../auth/client-registry.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyFileBox } from '../../auth/secret-box.ts';

describe("a PostgreSQL node's reads", { skip: postgresSkipReason() }, () => {
  const nodes = workNodes('reads');

  it('mirrors clients, secrets, engines, settings and the knowledge base, and sees another node\'s change at the next refresh', async () => {
    const [a] = await nodes(1);
    const db = a!.pool;
    const box = keyFileBox(join(mkdtempSync(join(tmpdir(), 'sb-mirror-')), 'secret.key'));
    await db.query(`INSERT INTO clients (id, enabled, settings, created_at, updated_at) VALUES ('shop', 1, '{"sendUrl":"http://127.0.0.1:9/hook","quietSeconds":3}', 1, 1)`);
    await db.query('INSERT INTO client_secrets (client_id, sealed, hint, created_at) VALUES ($1, $2, $3, 1)', ['shop', box.seal('s3cret-one'), 's3cr']);
    await db.query(`INSERT INTO engines (name, kind, config, api_key_sealed, created_at, updated_at) VALUES ('gpt', 'openai', '{"baseUrl":"http://127.0.0.1:9/v1","model":"m"}', NULL, 1, 1)`);
    await db.query(`INSERT INTO settings (key, value) VALUES ('kb_threshold', '0.6')`);
    await db.query(`INSERT INTO kb_entries (question, answer, phrasings, created_at, updated_at) VALUES ('How do I get a refund?', 'Within 7 days.', '["money back"]', 1, 1)`);
    const mirror = createConfigMirror(db);
    await mirror.refresh();
    assert.deepEqual(mirror.clients.list().map((c) => [c.id, c.enabled, c.settings.sendUrl, c.settings.quietSeconds]), [['shop', true, 'http://127.0.0.1:9/hook', 3]]);
    assert.equal(mirror.engines.get('gpt')?.config.model, 'm');
    assert.equal(mirror.settings.get('kb_threshold'), '0.6');
    assert.deepEqual(mirror.kb.all().map((e) => [e.question, e.phrasings]), [['How do I get a refund?', ['money back']]]);

    // The registry runs on the mirror as on SQLite: keys opened, a change seen through dataVersion.
    const registry = createClientRegistry(mirror, box);
    assert.equal(registry.lookup('shop', 0)?.keys.length, 1);
    const kbBefore = mirror.kb.version();
    const version = mirror.settings.dataVersion();
    await mirror.refresh();
    assert.equal(mirror.settings.dataVersion(), version, 'nothing changed: no rebuild');

    // Another node (or the CLI) disables the client, adds a secret and edits the knowledge base.
    await db.query("UPDATE clients SET enabled = 0, updated_at = 2 WHERE id = 'shop'");
    await db.query('INSERT INTO client_secrets (client_id, sealed, hint, created_at) VALUES ($1, $2, $3, 2)', ['shop', box.seal('s3cret-two'), 's3cr']);
    await db.query("UPDATE kb_entries SET answer = 'Within 14 days.'");
    await mirror.refresh();
    assert.notEqual(mirror.settings.dataVersion(), version);
    assert.deepEqual(Buffer.from(mirror.kb.version()).equals(Buffer.from(kbBefore)), false, 'the knowledge index rebuilds');
    assert.equal(mirror.kb.all()[0]!.answer, 'Within 14 days.');
    const shop = registry.recheck('shop', 5000);
    assert.equal(shop?.enabled, false);
    assert.equal(shop?.keys.length, 2, 'newest first, both active during a rotation');
  });

  it('a refresh asked for after a change reads after it, even while an older read is still under way', async () => {
    const pool = (await nodes(1))[0]!.pool;
    let hold: Promise<void> | null = null;
    let heldRead: () => void = () => {};
    const readDone = new Promise<void>((resolve) => (heldRead = resolve));
    // The first read's SELECTs run at once, but their answers wait: the read is "under way".
    const db = {
      query: ((...args: Parameters<typeof pool.query>) => {
        const result = (pool.query as (...x: unknown[]) => Promise<unknown>).apply(pool, args);
        const gate = hold;
        if (!gate) return result;
        if (String(args[0]).includes('FROM clients')) void result.then(() => heldRead());
        return result.then(async (r) => {
          await gate;
          return r;
        });
      }) as typeof pool.query,
    };
    const mirror = createConfigMirror(db);
    let release: () => void = () => {};
    hold = new Promise<void>((resolve) => (release = resolve));
    const older = mirror.refresh();
    hold = null;
    await readDone;
    await pool.query(`INSERT INTO clients (id, enabled, settings, created_at, updated_at) VALUES ('late', 1, '{}', 1, 1)`);
    const asked = mirror.refresh();
    const askedAgain = mirror.refresh();
    release();
    await older;
    assert.deepEqual(mirror.clients.list().map((c) => c.id).filter((id) => id === 'late'), [], 'the older read ran before the insert');
    await asked;
    assert.deepEqual(mirror.clients.list().map((c) => c.id).filter((id) => id === 'late'), ['late']);
    assert.equal(askedAgain, asked, 'callers during one read share the next');
  });

  it('reads names, quotes and the message a suggestion is for as SQLite does', async () => {
    const [a] = await nodes(1);
    const db = a!.pool;
    await db.query(`
      INSERT INTO clients (id, created_at, updated_at) VALUES ('shop', 1, 1);
      INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at) VALUES ('v1', 'shop', 'im', 'u1', 1, 1);
      INSERT INTO people (client_id, user_id, nickname, updated_at) VALUES ('shop', 'u1', 'Nora', 1);
      INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, from_user_id, content, message_info, received_at, shown)
        VALUES ('v1', 'shop', 'auto_dialog', 'm1', 'customer', 'u1', 'first', '{}', 1, NULL),
               ('v1', 'shop', 'auto_dialog', 'm1', 'customer', 'u1', 'again', '{}', 2, NULL),
               ('v1', 'shop', 'auto_dialog', 'm2', 'customer', 'u2', 'hi', '{}', 3, '{"name":"Omar"}');
      INSERT INTO replies (conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, created_at, operator)
        VALUES ('v1', 'operator', 'r1', '[]', 1, 'we are on it', 0, 'operator', 4, '{"id":"a1","name":"Ann"}'),
               ('v1', 'suggestion', 's1', '[]', 1, 'maybe', 0, 'kb', 4, NULL);`);
    const reads = pgMessageReads(db);
    assert.deepEqual([...(await reads.people.names('shop', ['u1', 'u2', 'u1']))], [['u1', 'Nora']]);
    assert.deepEqual(await reads.people.names('shop', []), new Map());
    const q = await reads.quotes('shop', ['m1', 'm2', 'r1', 's1', 'nope']);
    assert.deepEqual(q.get('m1'), { msgId: 'm1', role: 'customer', speaker: 'u1', speakerName: 'Nora', content: 'again' });
    assert.equal(q.get('m2')?.speakerName, 'Omar', 'the name sent with the message when nobody named the user');
    assert.deepEqual(q.get('r1'), { msgId: 'r1', role: 'staff', speaker: null, speakerName: 'Ann', content: 'we are on it' });
    assert.equal(q.has('s1'), false, 'a suggestion was never said');
    assert.equal(q.has('nope'), false);
    const found = await reads.messages.findAutoMessage('shop', 'm1');
    assert.equal(found?.conversationId, 'v1');
    assert.equal(await reads.messages.findAutoMessage('other', 'm1'), undefined);
  });

  it('sets a due timer for each conversation still waiting for a reply with none set, once, leaving set ones alone', async () => {
    const [a] = await nodes(1);
    const db = a!.pool;
    await db.query(`
      INSERT INTO clients (id, created_at, updated_at) VALUES ('shop', 1, 1);
      INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at) VALUES ('v1', 'shop', 'im', 'u1', 1, 1), ('v2', 'shop', 'im', 'u2', 1, 1), ('v3', 'shop', 'im', 'u3', 1, 1);
      INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at, reply_outcome)
        VALUES ('v1', 'shop', 'auto_dialog', 'a', 'customer', 'x', '{}', 1, 'pending'), ('v1', 'shop', 'auto_dialog', 'b', 'customer', 'y', '{}', 2, 'pending'),
               ('v2', 'shop', 'auto_dialog', 'c', 'customer', 'z', '{}', 3, 'answered'), ('v3', 'shop', 'auto_dialog', 'd', 'customer', 'w', '{}', 4, 'pending');
      INSERT INTO due_replies (conversation_id, due_at, last_message_id) VALUES ('v3', 99, 4);`);
    assert.equal(await restoreDueReplies(db, 1000), 1);
    assert.equal(await restoreDueReplies(db, 2000), 0, 'a second node starting sets nothing more');
    const rows = (await db.query('SELECT conversation_id, due_at::int AS due, last_message_id::int AS last FROM due_replies ORDER BY 1')).rows;
    assert.deepEqual(rows, [{ conversation_id: 'v1', due: 1000, last: 2 }, { conversation_id: 'v3', due: 99, last: 4 }]);
  });

  it("prepares each parameterized statement once on a node's connection, and sends the rest as they are", async () => {
    const [a] = await nodes(1);
    const pool = openPgPool(String(a!.pool.options.connectionString), { max: 1, onIdleError: () => {} });
    try {
      const c = await pool.connect();
      try {
        for (const id of ['x', 'y', 'z']) await c.query('SELECT $1::text AS id', [id]);
        await c.query('SELECT 1');
        const prepared = (await c.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements')).rows.map((r) => r.statement);
        assert.deepEqual(prepared, ['SELECT $1::text AS id']);
        assert.equal((await c.query<{ id: string }>('SELECT $1::text AS id', ['w'])).rows[0]!.id, 'w');
      } finally {
        c.release();
      }
    } finally {
      await pool.end();
    }
  });
});
