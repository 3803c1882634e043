import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../store/db.ts';
import { createStore, type Store } from '../store/index.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';
import type { DeliveryRow } from '../store/deliveries.ts';
import { pickFair, type LaneSource } from './fair-share.ts';

const NOW = 1_000;

/** A real store; `add` makes a pending delivery of a client's conversation to a URL, due at `at`. */
function setup() {
  const store = createStore(openDatabase(':memory:'));
  const add = (client: string, conversation: string, url: string, at = 0): number => {
    if (!store.clients.get(client)) store.clients.create(client, DEFAULT_CLIENT_SETTINGS, 0);
    if (!store.conversations.byId(conversation)) {
      store.conversations.create({ id: conversation, clientId: client, channel: 'im', peer: `u:${conversation}`, groupId: null, customerId: conversation, autoReply: 'active', now: 0 });
    }
    const replyId = store.messages.insertReply({ conversationId: conversation, kind: 'auto', msgId: `r${Math.random()}`, replyTo: [], afterMessageId: 0, content: 'x', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: at });
    return store.deliveries.insert({ replyId, replyMsgId: `r${replyId}`, conversationId: conversation, clientId: client, sendUrl: url, messageInfo: '{}', state: 'pending', nextAttemptAt: at, createdAt: at });
  };
  return { store, add };
}

/** The store as the outbox reads it, counting what each client's lanes cost to read. */
function source(store: Store, held: readonly DeliveryRow[] = []) {
  const reads = new Map<string, number>();
  const s: LaneSource = {
    clients: () => store.deliveries.pendingClients(),
    lanes: (clientId) => {
      reads.set(clientId, (reads.get(clientId) ?? 0) + 1);
      return store.deliveries.pendingLanes(clientId, 64);
    },
    due: (clientId, origin, limit, read) => {
      reads.set(clientId, (reads.get(clientId) ?? 0) + 1);
      const except = [...read, ...held.filter((h) => h.clientId === clientId && h.origin === origin).map((h) => h.id)];
      return store.deliveries.dueInLane(clientId, origin, NOW, limit, except);
    },
  };
  return { source: s, reads };
}

/** Counts of held (in flight) deliveries per client and per origin. */
function holding(rows: readonly DeliveryRow[]) {
  return {
    client: (id: string) => rows.filter((r) => r.clientId === id).length,
    origin: (origin: string) => rows.filter((r) => r.origin === origin).length,
  };
}

const A = 'http://dead.test/hook';
const B = 'http://live.test/hook';

test('free slots go round the clients, the one holding fewest first, rather than to the oldest backlog', () => {
  const { store, add } = setup();
  const a = Array.from({ length: 6 }, (_, i) => add('a', `a${i}`, A, i));
  const b = [add('b', 'b0', B, 100), add('b', 'b1', B, 101)];
  const picked = pickFair(source(store).source, holding([]), { free: 4, perClient: 64, perOrigin: 64 }, NOW);
  assert.deepEqual(picked.map((d) => d.id), [a[0], b[0], a[1], b[1]], 'a, b, a, b: each oldest first within its lane');
});

test('a client already holding slots waits for one holding none, whatever their ages', () => {
  const { store, add } = setup();
  const a0 = add('a', 'a0', A, 0);
  const a1 = add('a', 'a1', A, 1);
  const b0 = add('b', 'b0', B, 500);
  const held = [store.deliveries.get(a0)!];
  const picked = pickFair(source(store, held).source, holding(held), { free: 1, perClient: 64, perOrigin: 64 }, NOW);
  assert.deepEqual(picked.map((d) => d.id), [b0], `b (0 held) before a (1 held), though a1 (${a1}) is older`);
});

test('a client gets no more than its cap, however many slots are free', () => {
  const { store, add } = setup();
  for (let i = 0; i < 10; i++) add('a', `a${i}`, A, i);
  const b0 = add('b', 'b0', B, 50);
  const picked = pickFair(source(store).source, holding([]), { free: 8, perClient: 3, perOrigin: 64 }, NOW);
  assert.equal(picked.filter((d) => d.clientId === 'a').length, 3);
  assert.ok(picked.some((d) => d.id === b0));
  assert.equal(picked.length, 4, 'slots stay free rather than go over the cap');
});

test('a client at its cap costs the scan nothing: neither its lanes nor its backlog are read', () => {
  const { store, add } = setup();
  const a = Array.from({ length: 20 }, (_, i) => add('a', `a${i}`, A, i));
  const b0 = add('b', 'b0', B, 50);
  const held = a.slice(0, 2).map((id) => store.deliveries.get(id)!);
  const { source: s, reads } = source(store, held);
  const picked = pickFair(s, holding(held), { free: 10, perClient: 2, perOrigin: 64 }, NOW);
  assert.deepEqual(picked.map((d) => d.id), [b0]);
  assert.equal(reads.get('a'), undefined);
});

test('an origin shared by two clients is capped for both together', () => {
  const { store, add } = setup();
  for (let i = 0; i < 5; i++) add('a1', `x${i}`, A, i);
  for (let i = 0; i < 5; i++) add('a2', `y${i}`, 'http://DEAD.test:80/other', i);
  const b0 = add('b', 'b0', B, 50);
  const picked = pickFair(source(store).source, holding([]), { free: 8, perClient: 4, perOrigin: 2 }, NOW);
  const dead = picked.filter((d) => d.origin === 'http://dead.test:80');
  assert.equal(dead.length, 2, 'two for the origin, not four per client');
  assert.deepEqual(new Set(dead.map((d) => d.clientId)), new Set(['a1', 'a2']), 'shared between its clients');
  assert.ok(picked.some((d) => d.id === b0));
});

test("a client's origins take turns too: its dead receiver's backlog does not hold up its other receiver", () => {
  const { store, add } = setup();
  const dead = Array.from({ length: 6 }, (_, i) => add('a', `d${i}`, A, i));
  const live = [add('a', 'l0', B, 100), add('a', 'l1', B, 101)];
  const picked = pickFair(source(store).source, holding([]), { free: 4, perClient: 64, perOrigin: 64 }, NOW);
  assert.deepEqual(picked.map((d) => d.id), [dead[0], live[0], dead[1], live[1]]);
});

test('one reply per conversation at a time, in order, across lanes too; what is not due waits', () => {
  const { store, add } = setup();
  const first = add('a', 'c1', A, 0);
  add('a', 'c1', A, 1);
  add('a', 'c1', B, 2); // the same conversation, a later reply to another origin
  const other = add('a', 'c2', B, 3);
  add('a', 'c3', B, NOW + 1);
  const picked = pickFair(source(store).source, holding([]), { free: 10, perClient: 64, perOrigin: 64 }, NOW);
  assert.deepEqual(picked.map((d) => d.id).sort((x, y) => x - y), [first, other]);
  // Held by the outbox, the first still holds its conversation's later replies back.
  const held = [store.deliveries.get(first)!, store.deliveries.get(other)!];
  assert.deepEqual(pickFair(source(store, held).source, holding(held), { free: 10, perClient: 64, perOrigin: 64 }, NOW), []);
});

test('one client and one receiver alone are served oldest first, as the whole outbox was', () => {
  const { store, add } = setup();
  for (let i = 0; i < 12; i++) add('a', `c${i % 5}`, A, 100 - i);
  const picked = pickFair(source(store).source, holding([]), { free: 3, perClient: 64, perOrigin: 64 }, NOW);
  assert.deepEqual(picked.map((d) => d.id), store.deliveries.due(NOW, 3).map((d) => d.id));
});
