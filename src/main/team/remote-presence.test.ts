import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock } from '../../shared/clock.ts';
import { createRemotePresence, presentest } from './remote-presence.ts';

describe('presence heard from other nodes', () => {
  it('holds for the TTL unless said again, is online if any node says so, and ends when a node says offline', () => {
    const clock = manualClock(0);
    const remote = createRemotePresence({ clock, ttlMs: 90_000 });
    assert.equal(remote.presenceOf('ann'), 'offline', 'never heard of');
    remote.heard('node-a', 'ann', 'away');
    remote.heard('node-b', 'ann', 'online');
    assert.equal(remote.presenceOf('ann'), 'online');
    remote.heard('node-b', 'ann', 'offline');
    assert.equal(remote.presenceOf('ann'), 'away', 'node a still has her, away');
    clock.advance(60_000);
    remote.heard('node-a', 'ann', 'away');
    clock.advance(60_000);
    assert.equal(remote.presenceOf('ann'), 'away', 'said again 60 s ago: still holds');
    clock.advance(30_000);
    assert.equal(remote.presenceOf('ann'), 'offline', 'node a went quiet (died): offline after the TTL');
  });

  it('ranks online over away over offline', () => {
    assert.equal(presentest('offline', 'away'), 'away');
    assert.equal(presentest('away', 'online'), 'online');
    assert.equal(presentest('offline', 'offline'), 'offline');
  });
});
