import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEventBus, isFor } from './events.ts';
import type { ConsoleEvent } from '../../shared/console-api.ts';
import type { Caller } from '../../shared/console-roles.ts';

const caller = (id: string | null): Caller => ({ role: 'agent', owner: false, account: id ? { id, name: id } : null, address: null, session: null });

test('an event with recipients reaches only their consoles; one without reaches every console', () => {
  const mention: ConsoleEvent = { type: 'mention', conversationId: 'c', noteId: 1, by: { id: 'ann', name: 'Ann' }, text: 'hi', recipients: ['omar'] };
  const change: ConsoleEvent = { type: 'conversation', conversationId: 'c' };
  assert.equal(isFor(mention, caller('omar')), true);
  assert.equal(isFor(mention, caller('ann')), false);
  assert.equal(isFor(mention, caller(null)), false, 'a console with no account is nobody named');
  assert.equal(isFor(change, caller(null)), true);
  const request: ConsoleEvent = { type: 'request', status: 401, code: 'invalid_signature' };
  assert.equal(isFor(request, caller('omar')), false, 'the endpoint\'s requests are the request log\'s, an admin\'s view');
  assert.equal(isFor(request, { ...caller('olga'), role: 'admin' }), true);
  const bus = createEventBus();
  const got: Record<string, string[]> = { omar: [], ann: [], all: [] };
  bus.subscribe((e) => got['omar']!.push(e.type), { caller: caller('omar') });
  bus.subscribe((e) => got['ann']!.push(e.type), { caller: () => caller('ann') });
  bus.subscribe((e) => got['all']!.push(e.type));
  bus.emit(mention);
  bus.emit(change);
  assert.deepEqual(got, { omar: ['mention', 'conversation'], ann: ['conversation'], all: ['mention', 'conversation'] });
});

test('a console\'s event stream is a sign of life for its account while open', () => {
  const bus = createEventBus();
  const open: string[] = [];
  bus.watchStreams((id) => {
    open.push(id);
    return () => open.splice(open.indexOf(id), 1);
  });
  const close = bus.subscribe(() => {}, { caller: caller('ann'), stream: true });
  bus.subscribe(() => {}, { caller: caller('boss') });
  assert.deepEqual(open, ['ann'], 'only a stream counts (the desktop window heartbeats instead)');
  close();
  assert.deepEqual(open, []);
});

test('an event emitted here goes to its consoles and then to onEmit\'s observers; one delivered from elsewhere only to its consoles', () => {
  const bus = createEventBus();
  const order: string[] = [];
  bus.subscribe((e) => order.push(`omar:${e.type}`), { caller: caller('omar') });
  bus.subscribe((e) => order.push(`ann:${e.type}`), { caller: caller('ann') });
  const stop = bus.onEmit((e) => order.push(`relay:${e.type}`));
  const stopRemote = bus.onDeliver((e, from) => order.push(`team:${e.type}@${from}`));
  const mention: ConsoleEvent = { type: 'mention', conversationId: 'c', noteId: 1, by: { id: 'ann', name: 'Ann' }, text: 'hi', recipients: ['omar'] };
  bus.emit(mention);
  assert.deepEqual(order, ['omar:mention', 'relay:mention'], 'observers see every event, whoever it is for (each node filters for its consoles)');
  order.length = 0;
  bus.deliver(mention, 'node-b');
  bus.deliver({ type: 'resync' });
  assert.deepEqual(order, ['omar:mention', 'team:mention@node-b', 'omar:resync', 'ann:resync', 'team:resync@'], 'what came from elsewhere is not sent back out; its observers learn which node sent it');
  order.length = 0;
  stop();
  stopRemote();
  bus.emit({ type: 'conversation', conversationId: 'c' });
  assert.deepEqual(order, ['omar:conversation', 'ann:conversation']);
});
