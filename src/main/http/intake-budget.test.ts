import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createIntakeBudget } from './intake-budget.ts';

test('an address holds its share at most, the server its total; what is released is free again', () => {
  const budget = createIntakeBudget({ totalBytes: 100, perAddressBytes: 60, perAddressConnections: 2, bodyTimeoutMs: 1000, maxConnections: 100 });
  const a1 = budget.reserve('a', 50);
  assert.notEqual(typeof a1, 'string');
  assert.equal(budget.reserve('a', 20), 'address', 'the reservation is made when the request starts');
  const b1 = budget.reserve('b', 50);
  assert.notEqual(typeof b1, 'string');
  assert.equal(budget.reserve('c', 1), 'total', 'another address, but the server is full');
  assert.equal(budget.held(), 100);
  if (typeof a1 === 'string' || typeof b1 === 'string') return;
  a1.release();
  a1.release();
  assert.equal(budget.held(), 50, 'released once, however often asked');
  assert.notEqual(typeof budget.reserve('a', 50), 'string');
});

test('a body of unknown length grows its lease chunk by chunk until a share runs out', () => {
  const budget = createIntakeBudget({ totalBytes: 100, perAddressBytes: 30, perAddressConnections: 2, bodyTimeoutMs: 1000, maxConnections: 100 });
  const lease = budget.reserve('a', 0);
  assert.ok(typeof lease !== 'string');
  assert.equal(lease.grow(20), null);
  assert.equal(lease.grow(20), 'address');
  assert.equal(budget.held(), 20, 'a refused growth takes nothing');
  lease.release();
  assert.equal(budget.held(), 0);
});

test('connections are counted per address; those past the cap are said so until some close', () => {
  const budget = createIntakeBudget({ totalBytes: 100, perAddressBytes: 30, perAddressConnections: 2, bodyTimeoutMs: 1000, maxConnections: 100 });
  assert.deepEqual([budget.connected('a'), budget.connected('a'), budget.connected('a'), budget.connected('b')], [true, true, false, true]);
  budget.closed('a');
  budget.closed('a');
  assert.equal(budget.connected('a'), true);
});
