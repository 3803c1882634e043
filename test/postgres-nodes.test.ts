import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from './helpers/postgres.ts';
import { startReceiver, eventually, verifyDelivery, type Receiver } from './helpers/receiver.ts';
import { addPgClient, post, spawnPgNode, type PgNode } from './helpers/pg-node.ts';
import { keyFileBox } from '../src/main/auth/secret-box.ts';

const SECRET = 'pg-nodes-secret-0123456789';

/**
 * Several `serve --store postgres://…` processes on one database (issue 30): any node takes any
 * request, and the service behaves as one.
 */
describe('two nodes on one PostgreSQL database', { skip: postgresSkipReason(), timeout: 180_000 }, () => {
  let server: PgServer;
  let receiver: Receiver;
  let nodes: PgNode[] = [];
  let storeUrl = '';
  const dir = mkdtempSync(join(tmpdir(), 'sb-pg-nodes-'));
  const keyFile = join(dir, 'shared.key');

  before(async () => {
    server = await startPostgres();
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query("CREATE DATABASE switchboard TEMPLATE template0 ENCODING 'UTF8' LC_CTYPE 'C.UTF-8' LC_COLLATE 'C.UTF-8'");
    await admin.end();
    storeUrl = server.url.replace(/\/postgres$/, '/switchboard');
    keyFileBox(keyFile).seal('make the key file');
    receiver = await startReceiver();
    // Started together: one migrates under the advisory lock, the other waits and finds nothing to do.
    nodes = await Promise.all(['a', 'b'].map((n) => spawnPgNode(join(dir, n), storeUrl, keyFile)));
    await addPgClient(storeUrl, keyFile, 'shop', SECRET, { sendUrl: receiver.url, quietSeconds: 0.2, quietMaxSeconds: 1, fallbackText: 'A person will answer soon.' });
    const db = new pg.Client({ connectionString: storeUrl });
    await db.connect();
    await db.query("INSERT INTO kb_entries (question, answer, phrasings, created_at, updated_at) VALUES ('What are your opening hours?', 'We are open 9 to 5.', '[\"when are you open\"]', 1, 1)");
    await db.end();
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await receiver?.close();
    await server?.stop();
  });

  it('migrates once, each node naming itself', () => {
    assert.equal(nodes.length, 2);
    assert.notEqual(nodes[0]!.nodeId, nodes[1]!.nodeId);
    const applied = nodes.filter((n) => /applied migrations 1, 2, 3, 4, 5, 6/.test(n.stderr()));
    assert.equal(applied.length, 1, nodes.map((n) => n.stderr()).join('\n---\n'));
  });

  it('delivers every auto reply once, in order per conversation, whichever node each message reached', async () => {
    const conversations = 4;
    const rounds = 3;
    const before = receiver.received.length;
    for (let round = 0; round < rounds; round++) {
      await Promise.all(
        Array.from({ length: conversations }, async (_, c) => {
          const node = nodes[(round + c) % 2]!;
          const r = await post(node.endpoint, 'shop', SECRET, {
            event_type: 'auto_dialog',
            msg_id: `order-${c}-${round}`,
            from_user_id: `customer-${c}`,
            to_user_id: 'shop-bot',
            content: 'When are you open?',
            message_type: 1,
            from_user_type: 2,
          });
          assert.equal(r.status, 200, JSON.stringify(r.json));
        }),
      );
      // Each round's message is answered before the next is sent: a reply of its own per round.
      await eventually(() => receiver.received.length - before >= conversations * (round + 1), `round ${round + 1}'s replies`, 30_000);
    }
    const got = receiver.received.slice(before);
    assert.equal(got.length, conversations * rounds, 'never twice');
    for (const r of got) assert.ok(verifyDelivery(r, SECRET), 'signed with the client secret');
    assert.equal(new Set(got.map((r) => r.body.message_info['msg_id'])).size, got.length);
    for (let c = 0; c < conversations; c++) {
      const replies = got.filter((r) => r.body.message_info['to_user_id'] === `customer-${c}`);
      assert.deepEqual(replies.map((r) => r.body.message_info['reply_to']), Array.from({ length: rounds }, (_, round) => [`order-${c}-${round}`]), 'in order');
      assert.ok(replies.every((r) => r.body.message_info['content'] === 'We are open 9 to 5.'));
    }
  });

  it('refuses on one node a signed request another node accepted, and answers an idempotent retry from the stored response', async () => {
    const [a, b] = nodes;
    const first = await post(a!.endpoint, 'shop', SECRET, { event_type: 'auto_dialog', msg_id: 'replayed-1', from_user_id: 'replayer', to_user_id: 'shop-bot', content: 'hi', message_type: 1, from_user_type: 2 });
    assert.equal(first.status, 200);
    const again = await post(b!.endpoint, 'shop', SECRET, {}, first.sent);
    assert.equal(again.status, 200, 'an exact retry with a msg_id gets the first response');
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.json, first.json);

    const noMsgId = await post(a!.endpoint, 'shop', SECRET, { event_type: 'auto_dialog', from_user_id: 'replayer', to_user_id: 'shop-bot', content: 'no id', message_type: 1, from_user_type: 2 });
    assert.equal(noMsgId.status, 200);
    const replayed = await post(b!.endpoint, 'shop', SECRET, {}, noMsgId.sent);
    assert.equal(replayed.status, 409);
    assert.equal(replayed.headers.get('content-type'), 'application/problem+json');
    assert.equal(replayed.json['code'], 'replayed_request');
  });

  it('answers a website visitor on either node with what was said on the other', async () => {
    const [a, b] = nodes;
    const info = (content: string, msgId: string) => ({ event_type: 'website_dialog', msg_id: msgId, from_user_id: 'visitor-1', to_user_id: 'shop-site', content, message_type: 1, from_user_type: 2 });
    const one = await post(a!.endpoint, 'shop', SECRET, info('When are you open?', 'web-1'));
    assert.equal(one.status, 200, JSON.stringify(one.json));
    assert.equal((one.json['reply'] as { content: string } | undefined)?.content ?? one.json['content'], 'We are open 9 to 5.');
    const two = await post(b!.endpoint, 'shop', SECRET, info('and on Sunday?', 'web-2'));
    assert.equal(two.status, 200);
    assert.equal(two.json['conversation_id'], one.json['conversation_id'], 'one conversation across nodes');
  });
});
