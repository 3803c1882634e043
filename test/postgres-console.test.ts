import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from './helpers/postgres.ts';
import { startReceiver, eventually, type Receiver } from './helpers/receiver.ts';
import { addPgClient, nodeConsole, post, preparePgInstallation, spawnPgNode, type PgNode } from './helpers/pg-node.ts';
import { connectConsole } from './helpers/console.ts';
import type { ConsoleEvent } from '../src/shared/console-api.ts';

const SECRET = 'pg-console-secret-0123456789';

type Console = Awaited<ReturnType<typeof connectConsole>>;

/** The console of `node` as its printed URL opens it: the origin and the token in the fragment. */
async function consoleOf(node: PgNode): Promise<Console> {
  const { base, token } = nodeConsole(node);
  return connectConsole(base, token);
}

/** When the first event matching `test` arrived on `c` (Date.now()), waiting for it. */
async function arrival(c: Console, test: (e: ConsoleEvent) => boolean, what: string): Promise<number> {
  await eventually(() => c.events.some(test), what, 20_000);
  return c.eventTimes[c.events.findIndex(test)]!;
}

/**
 * Consoles on a PostgreSQL installation (issue 30): each node serves the console, and every
 * console sees what any node did, live (LISTEN/NOTIFY) and in its reads (the shared database).
 */
describe('consoles on two PostgreSQL nodes', { skip: postgresSkipReason(), timeout: 180_000 }, () => {
  let server: PgServer;
  let receiver: Receiver;
  let nodes: PgNode[] = [];
  const consoles: Console[] = [];

  before(async () => {
    server = await startPostgres();
    const { storeUrl, keyFile, dataDirs } = await preparePgInstallation(server.url, mkdtempSync(join(tmpdir(), 'sb-pg-console-')), ['a', 'b'], { consolePort: 0 });
    receiver = await startReceiver();
    nodes = await Promise.all(dataDirs.map((d) => spawnPgNode(d, storeUrl, keyFile)));
    await addPgClient(storeUrl, keyFile, 'shop', SECRET, { sendUrl: receiver.url, quietSeconds: 0.2, quietMaxSeconds: 1, fallbackText: 'A person will answer soon.' });
    const db = new pg.Client({ connectionString: storeUrl });
    await db.connect();
    await db.query("INSERT INTO kb_entries (question, answer, phrasings, created_at, updated_at) VALUES ('What are your opening hours?', 'We are open 9 to 5.', '[\"when are you open\"]', 1, 1)");
    await db.end();
    // Each node knows a client added on another machine within a second (its configuration mirror),
    // at once when a request of that client reaches it: one per node, so the tests need not wait.
    for (const [i, node] of nodes.entries()) {
      const r = await post(node.endpoint, 'shop', SECRET, { event_type: 'website_dialog', msg_id: `warm-up-${i}`, from_user_id: `visitor-${i}`, to_user_id: 'shop-bot', content: 'hi', message_type: 1, from_user_type: 2 });
      assert.equal(r.status, 200, JSON.stringify(r.json));
    }
  });
  after(async () => {
    for (const c of consoles) await c.close();
    if (process.env.PG_NODES_DEBUG) for (const n of nodes) console.error(`--- ${n.nodeId}\n${n.stderr()}`);
    await Promise.all(nodes.map((n) => n.stop()));
    await receiver?.close();
    await server?.stop();
  });

  it('every node prints the same console URL (one token from the shared key)', () => {
    const tokens = nodes.map((n) => new URL(n.console).hash);
    assert.equal(tokens.length, 2);
    assert.equal(tokens[0], tokens[1]);
  });

  it('a console on node A sees within 1 s a message ingested and a reply delivered by node B, and reads both', async (t) => {
    const a = await consoleOf(nodes[0]!);
    consoles.push(a);
    const sentAt = Date.now();
    const r = await post(nodes[1]!.endpoint, 'shop', SECRET, {
      event_type: 'auto_dialog',
      msg_id: 'live-1',
      from_user_id: 'alice',
      to_user_id: 'shop-bot',
      content: 'When are you open?',
      message_type: 1,
      from_user_type: 2,
    });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const conversationId = r.json['conversation_id'] as string;
    const seenAt = await arrival(a, (e) => e.type === 'conversation' && e.conversationId === conversationId, 'the message on node A');
    assert.ok(seenAt - sentAt < 1000, `the message reached node A's console ${seenAt - sentAt} ms after it was sent to node B`);

    await eventually(() => receiver.received.some((q) => q.body.message_info['to_user_id'] === 'alice'), 'the reply delivered', 20_000);
    const receivedAt = receiver.received.find((q) => q.body.message_info['to_user_id'] === 'alice')!.at;
    const deliveredAt = await arrival(a, (e) => e.type === 'delivery' && e.conversationId === conversationId && e.state === 'sent', 'the delivery on node A');
    assert.ok(deliveredAt - receivedAt < 1000, `the delivery reached node A's console ${deliveredAt - receivedAt} ms after the receiver had it`);
    t.diagnostic(`node B → node A's console: the message after ${seenAt - sentAt} ms, the delivery after ${deliveredAt - receivedAt} ms`);

    const list = await a.ok('listConversations', {});
    const row = list.items.find((c) => c.id === conversationId);
    assert.ok(row, 'in node A\'s list');
    const transcript = await a.ok('getTranscript', { conversationId });
    const kinds = transcript.entries.map((e) => `${e.role}:${e.content}`);
    const asked = transcript.entries.find((e) => e.kind === 'message' && e.role === 'customer');
    assert.equal(asked?.decision?.delivery?.state, 'sent', 'node A shows the reply node B delivered');
    assert.ok(kinds.includes('customer:When are you open?'), kinds.join(' | '));
    assert.ok(kinds.some((k) => k.includes('We are open 9 to 5.')), kinds.join(' | '));
  });

  it('an operator on node A takes over: a message then sent to node B is not answered, and the operator\'s reply from A is delivered; node B\'s console sees it', async () => {
    const a = consoles[0] ?? (await consoleOf(nodes[0]!));
    const b = await consoleOf(nodes[1]!);
    consoles.push(b);
    const first = await post(nodes[1]!.endpoint, 'shop', SECRET, { event_type: 'auto_dialog', msg_id: 'takeover-1', from_user_id: 'bob', to_user_id: 'shop-bot', content: 'When are you open?', message_type: 1, from_user_type: 2 });
    const conversationId = first.json['conversation_id'] as string;
    await eventually(() => receiver.received.some((q) => q.body.message_info['to_user_id'] === 'bob'), 'the first auto reply', 20_000);
    await a.ok('setOperator', { id: 'ann', name: 'Ann' });
    const stopped = await a.ok('stopAutoReply', { conversationId });
    assert.equal(stopped.previous, 'active');
    const before = receiver.received.length;
    const second = await post(nodes[1]!.endpoint, 'shop', SECRET, { event_type: 'auto_dialog', msg_id: 'takeover-2', from_user_id: 'bob', to_user_id: 'shop-bot', content: 'Hello? Anyone?', message_type: 1, from_user_type: 2 });
    assert.equal(second.status, 200);
    await arrival(b, (e) => e.type === 'conversation' && e.conversationId === conversationId, 'node B\'s console sees the conversation change');
    const transcript = await a.ok('getTranscript', { conversationId });
    const last = transcript.entries.at(-1);
    assert.ok(last?.kind === 'message' && last.content === 'Hello? Anyone?');
    await a.ok('sendReply', { conversationId, content: 'Hi Bob, this is Ann from the shop.', replyTo: [] });
    await eventually(() => receiver.received.slice(before).some((q) => q.body.message_info['content'] === 'Hi Bob, this is Ann from the shop.'), 'the operator reply delivered', 20_000);
    const autoReplies = receiver.received.slice(before).filter((q) => q.body.message_info['content'] !== 'Hi Bob, this is Ann from the shop.');
    assert.deepEqual(autoReplies.map((q) => q.body.message_info['content']), [], 'no auto reply after the takeover');
    await arrival(b, (e) => e.type === 'delivery' && e.conversationId === conversationId && e.state === 'sent', 'node B\'s console sees the operator reply delivered');
  });
});
