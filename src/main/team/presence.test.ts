import { test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock } from '../../shared/clock.ts';
import { createPresence } from './presence.ts';
import { createActivity } from './activity.ts';
import type { ConversationActivity, Presence } from '../../shared/console-api.ts';

test('online while an event stream is open, or for 90 s after the last heartbeat; then offline', () => {
  const clock = manualClock(0);
  const changes: Array<[string, Presence, number]> = [];
  const p = createPresence({ clock, onChange: (id, now) => changes.push([id, now, clock.now()]) });
  const close = p.streamOpened('ann');
  assert.equal(p.presenceOf('ann'), 'online');
  clock.advance(10 * 60_000);
  assert.equal(p.presenceOf('ann'), 'online', 'a stream needs no heartbeat');
  close();
  clock.advance(89_999);
  assert.equal(p.presenceOf('ann'), 'online');
  clock.advance(1);
  assert.equal(p.presenceOf('ann'), 'offline');
  assert.equal(p.offlineSince('ann'), 690_000);
  // The desktop window has no stream: heartbeats alone.
  p.heartbeat('omar', false);
  clock.advance(60_000);
  p.heartbeat('omar', false);
  clock.advance(89_000);
  assert.equal(p.presenceOf('omar'), 'online');
  clock.advance(1000);
  assert.equal(p.presenceOf('omar'), 'offline');
  assert.deepEqual(changes, [['ann', 'online', 0], ['ann', 'offline', 690_000], ['omar', 'online', 690_000], ['omar', 'offline', 840_000]]);
  p.stop();
});

test('away by the console\'s word (by hand, or idle), online again with the next heartbeat; never seen counts as gone 90 s after the start', () => {
  const clock = manualClock(1000);
  const changes: string[] = [];
  const p = createPresence({ clock, onChange: (id, now) => changes.push(`${id}:${now}`) });
  assert.equal(p.presenceOf('lee'), 'offline');
  assert.equal(p.offlineSince('lee'), 91_000, 'a restart gives consoles the same grace as a dropped connection');
  const close = p.streamOpened('ann');
  assert.equal(p.heartbeat('ann', true), 'away');
  assert.equal(p.heartbeat('ann', false), 'online');
  close();
  close();
  clock.advance(90_000);
  assert.deepEqual(changes, ['ann:online', 'ann:away', 'ann:online', 'ann:offline']);
  p.stop();
});

test('"viewing" and "typing" per account: events only on a change, gone 30 s after the last refresh', () => {
  const clock = manualClock(0);
  const events: Array<[string, ConversationActivity]> = [];
  const a = createActivity({ clock, onChange: (id, now) => events.push([id, now]) });
  a.set('ann', 'c1', null);
  a.set('omar', 'c1', 'c1');
  assert.deepEqual(a.of('c1'), { viewing: ['ann', 'omar'], typing: ['omar'] });
  events.length = 0;
  clock.advance(20_000);
  a.set('ann', 'c1', null);
  assert.deepEqual(events, [], 'a refresh that changes nothing says nothing');
  clock.advance(10_000);
  assert.deepEqual(a.of('c1'), { viewing: ['ann'], typing: [] }, "Omar's console went quiet 30 s ago");
  a.set('ann', 'c2', 'c2');
  assert.deepEqual(events.at(-1), ['c2', { viewing: ['ann'], typing: ['ann'] }]);
  assert.deepEqual(a.snapshot(), { c2: { viewing: ['ann'], typing: ['ann'] } });
  a.clear('ann');
  assert.deepEqual(a.snapshot(), {});
  a.stop();
});

test('lingering: online only by the grace after the last stream closed, until a stream or a heartbeat', () => {
  const clock = manualClock(0);
  const p = createPresence({ clock, onChange: () => {} });
  assert.equal(p.lingering('ann'), false, 'never seen');
  const close = p.streamOpened('ann');
  assert.equal(p.lingering('ann'), false, 'a stream is open');
  close();
  assert.equal(p.presenceOf('ann'), 'online');
  assert.equal(p.lingering('ann'), true, 'the console left: only the grace holds');
  p.heartbeat('ann', true);
  assert.equal(p.lingering('ann'), false, 'a heartbeat here is a console here');
  const again = p.streamOpened('ann');
  again();
  clock.advance(90_000);
  assert.equal(p.presenceOf('ann'), 'offline');
  assert.equal(p.lingering('ann'), false, 'offline is not lingering');
});
