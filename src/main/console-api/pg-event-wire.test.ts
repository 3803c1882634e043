import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConsoleEvent } from '../../shared/console-api.ts';
import { createDecoder, encodeEvent, encodeHello, MAX_PARTS, NOTIFY_MAX_BYTES } from './pg-event-wire.ts';

const who = { peer: 'wxid_顾客', groupId: null, groupName: null, customerId: 'c1', customerName: '王小明' };

test('an event too big for one NOTIFY goes in parts under the limit, and arrives whole, characters split between parts included', () => {
  // 3-byte characters in 5,400-byte parts: a part boundary falls inside a character.
  const event: ConsoleEvent = { type: 'alert', conversationId: 'c1', reason: 'handoff', text: 'x', said: '退货'.repeat(4000), who, recipients: ['ann'] };
  const payloads = encodeEvent('node-a', 'run1', 7, event)!;
  assert.ok(payloads.length > 1);
  for (const p of payloads) assert.ok(Buffer.byteLength(p) <= NOTIFY_MAX_BYTES, `${Buffer.byteLength(p)} bytes`);
  const d = createDecoder('node-b');
  for (const p of payloads.slice(0, -1)) assert.deepEqual(d.receive(p), { kind: 'partial' });
  assert.deepEqual(d.receive(payloads.at(-1)!), { kind: 'event', event, node: 'node-a', seq: 7, missed: 0 });
});

test('an event beyond MAX_PARTS parts is not encoded', () => {
  const event: ConsoleEvent = { type: 'alert', conversationId: 'c1', reason: 'handoff', text: 'x', said: 'y'.repeat(5400 * MAX_PARTS + 1) };
  assert.equal(encodeEvent('a', 'r', 1, event), null);
});

test('a part without the parts before it is dropped, and the lost event shows as a gap', () => {
  const big: ConsoleEvent = { type: 'alert', conversationId: 'c1', reason: 'handoff', text: 'x', said: 'y'.repeat(20_000) };
  const [, second] = encodeEvent('a', 'r', 1, big)!;
  const d = createDecoder('b');
  assert.equal(d.receive(second!).kind, 'malformed');
  const next = d.receive(encodeEvent('a', 'r', 2, { type: 'proposals', pending: 1 })![0]!);
  assert.equal(next.kind, 'event');
  // The first event seen from a node has nothing before it to miss; the decoder saw 2 first.
  const after = d.receive(encodeEvent('a', 'r', 4, { type: 'proposals', pending: 2 })![0]!);
  assert.equal(after.kind === 'event' && after.missed, 1);
});

test('numbers per node and run: own events ignored, a repeat dropped, a gap counted, a new run starts afresh', () => {
  const d = createDecoder('b');
  const ev = (node: string, run: string, seq: number) => d.receive(encodeEvent(node, run, seq, { type: 'conversation', conversationId: 'c' })![0]!);
  assert.equal(ev('b', 'r', 1).kind, 'own');
  assert.equal(ev('a', 'r', 5).kind, 'event');
  assert.equal(ev('a', 'r', 5).kind, 'duplicate');
  const gap = ev('a', 'r', 9);
  assert.equal(gap.kind === 'event' && gap.missed, 3);
  const restarted = ev('a', 'r2', 1);
  assert.equal(restarted.kind === 'event' && restarted.missed, 0);
  d.reset();
  const fresh = ev('a', 'r2', 40);
  assert.equal(fresh.kind === 'event' && fresh.missed, 0, 'after a reset nothing is known to be missed (the resync covers it)');
});

test('what is not an event from a node is malformed, never thrown', () => {
  const d = createDecoder('b');
  for (const p of ['', 'hello', '{}', '[1]', '{"v":2,"n":"a","r":"r","s":1,"e":{}}', '{"v":1,"n":"a b","r":"r","s":1,"e":{"type":"resync"}}', '{"v":1,"n":"a","r":"r","s":1}']) {
    assert.equal(d.receive(p).kind, 'malformed', p);
  }
  const unknown = d.receive('{"v":1,"n":"a","r":"r","s":1,"e":{"type":"telepathy"}}');
  assert.equal(unknown.kind, 'malformed', 'an event kind this version does not know');
  const wrong = d.receive('{"v":1,"n":"a","r":"r","s":2,"e":{"type":"mention","conversationId":"c","noteId":1,"by":{"id":"x","name":"X"},"text":"t"}}');
  assert.equal(wrong.kind, 'malformed', 'a mention without recipients would reach every console');
});

test('a hello is read as one and takes no number: the event after it is no gap, a second hello no duplicate', () => {
  const decoder = createDecoder('node-b');
  assert.equal(decoder.receive(encodeEvent('node-a', 'run1', 1, { type: 'conversation', conversationId: 'c1' })![0]!).kind, 'event');
  assert.deepEqual(decoder.receive(encodeHello('node-a', 'run1', 2)), { kind: 'hello', node: 'node-a' });
  assert.deepEqual(decoder.receive(encodeHello('node-a', 'run1', 2)), { kind: 'hello', node: 'node-a' });
  assert.deepEqual(decoder.receive(encodeEvent('node-a', 'run1', 2, { type: 'conversation', conversationId: 'c1' })![0]!), { kind: 'event', event: { type: 'conversation', conversationId: 'c1' }, node: 'node-a', seq: 2, missed: 0 });
  assert.equal(decoder.receive(encodeHello('node-b', 'run9', 1)).kind, 'own');
});
