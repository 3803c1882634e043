import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LANE_DUE_SQL, PENDING_CLIENTS_SQL, CLIENT_LANES_SQL, originOf } from './delivery-lanes.ts';
import { seededDeliveries } from './deliveries.fixture.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';

const seeded = seededDeliveries;

test('due deliveries of a lane leave out those the outbox holds, and the next of their conversation stays behind them', () => {
  const { store, add } = seeded();
  const a1 = add('c1', 10);
  add('c1', 11);
  const b1 = add('c2', 20);
  const lane = (limit: number, except: number[]) => store.deliveries.dueInLane('a', 'http://127.0.0.1:9', 100, limit, except).map((d) => d.id);
  assert.deepEqual(lane(10, []), [a1, b1]);
  assert.deepEqual(lane(10, [a1]), [b1]);
  assert.deepEqual(lane(10, [a1, b1]), []);
  assert.deepEqual(lane(1, [a1]), [b1], 'the limit counts only what is returned');
  assert.deepEqual(store.deliveries.dueInLane('a', 'http://127.0.0.1:9', 15, 10, []).map((d) => d.id), [a1], 'not yet due');
  assert.deepEqual(store.deliveries.dueInLane('a', 'https://elsewhere:443', 100, 10, []), [], 'another lane');
});

test("lanes: the clients with pending deliveries, and each client's origins with its earliest pending delivery", () => {
  const { store, add } = seeded();
  store.clients.create('b', DEFAULT_CLIENT_SETTINGS, 0);
  store.conversations.create({ id: 'b1', clientId: 'b', channel: 'im', peer: 'u:b1', groupId: null, customerId: 'b1', autoReply: 'active', now: 0 });
  const insert = (conv: string, client: string, url: string, at: number): number => {
    const replyId = store.messages.insertReply({ conversationId: conv, kind: 'auto', msgId: `r${Math.random()}`, replyTo: [], afterMessageId: 0, content: 'x', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: at });
    return store.deliveries.insert({ replyId, replyMsgId: `r${replyId}`, conversationId: conv, clientId: client, sendUrl: url, messageInfo: '{}', state: 'pending', nextAttemptAt: at, createdAt: at });
  };
  assert.deepEqual(store.deliveries.pendingClients(), []);
  const a1 = add('c1', 30);
  const a0 = add('c2', 20);
  const h1 = insert('c1', 'a', 'https://Hooks.example.com/x?y', 50);
  const h2 = insert('c2', 'a', 'https://hooks.example.com:443/other', 40);
  insert('b1', 'b', 'https://hooks.example.com/b', 60);
  assert.deepEqual(store.deliveries.pendingClients(), ['a', 'b']);
  assert.deepEqual(store.deliveries.pendingLanes('a', 10), [
    { origin: 'http://127.0.0.1:9', earliestId: a0, earliestAt: 20 },
    { origin: 'https://hooks.example.com:443', earliestId: h2, earliestAt: 40 },
  ]);
  assert.equal(store.deliveries.pendingLanes('a', 1).length, 1, 'at most the limit');
  store.deliveries.recordAttempt({ deliveryId: a0, attempt: 1, startedAt: 0, durationMs: 1, status: 200, error: null, outcome: 'sent', state: 'sent', nextAttemptAt: 0, now: 0 });
  assert.equal(store.deliveries.pendingLanes('a', 10)[0]!.earliestId, a1, 'a sent one leaves its lane');
  assert.equal(store.deliveries.get(h1)!.origin, 'https://hooks.example.com:443');
});

test('an origin is scheme://host:port, the default port spelled out; a send_url that is no URL is its own', () => {
  assert.equal(originOf('http://127.0.0.1/hook'), 'http://127.0.0.1:80');
  assert.equal(originOf('HTTPS://Example.COM:8443/a/b?c#d'), 'https://example.com:8443');
  assert.equal(originOf('http://[::1]:9000/'), 'http://[::1]:9000');
  assert.equal(originOf('not a url'), 'not a url');
});

test('the lane queries use deliveries_lane: one seek per client and per lane, no scan or sort of the pending deliveries', () => {
  const { store } = seeded();
  const planOf = (sql: string, ...args: Array<string | number>): string[] =>
    (store.connection.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>).map((r) => r.detail);
  const lane = planOf(LANE_DUE_SQL, 'a', 'o', 1, '[1]', 1);
  const clients = planOf(PENDING_CLIENTS_SQL);
  const lanes = planOf(CLIENT_LANES_SQL, 'a', 1);
  assert.ok(lane.some((p) => p.includes('SEARCH d USING INDEX deliveries_lane (client_id=? AND origin=? AND next_attempt_at<?)')), lane.join('\n'));
  assert.ok(lane.some((p) => p.includes('deliveries_pending')), lane.join('\n'));
  assert.ok(clients.some((p) => p.includes('deliveries_lane (client_id>?)')), clients.join('\n'));
  assert.ok(lanes.some((p) => p.includes('deliveries_lane (client_id=? AND origin>?)')), lanes.join('\n'));
  for (const plan of [lane, clients, lanes]) assert.ok(!plan.some((p) => /TEMP B-TREE|^SCAN (d|e|deliveries)$/.test(p)), plan.join('\n'));
});
