import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createReplayGuard } from './replay-guard.ts';

test('a confirmed signature is refused within the window and forgotten after it', () => {
  const g = createReplayGuard(600_000);
  assert.ok(g.reserve('c', 's1', 0));
  g.confirm('c', 's1', 0);
  assert.ok(!g.reserve('c', 's1', 599_999));
  assert.ok(g.reserve('other', 's1', 1), 'per client');
  assert.ok(g.reserve('c', 's1', 600_000));
});

test('an in-flight signature blocks its twin; a released one can be sent again', () => {
  const g = createReplayGuard(600_000);
  assert.ok(g.reserve('c', 's', 0));
  assert.ok(!g.reserve('c', 's', 0));
  g.release('c', 's');
  assert.ok(g.reserve('c', 's', 0));
});

test('loads persisted signatures in time order and expires them from the front', () => {
  const g = createReplayGuard(1000);
  g.load([
    { clientId: 'c', signature: 'b', seenAt: 500 },
    { clientId: 'c', signature: 'a', seenAt: 100 },
  ]);
  assert.ok(!g.reserve('c', 'a', 1000));
  assert.ok(g.reserve('c', 'a', 1100));
  assert.equal(g.size, 1);
});
