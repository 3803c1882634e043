import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { manualClock, type ManualClock } from '../../shared/clock.ts';
import { openDatabase } from '../store/db.ts';
import { createStore, type Store } from '../store/index.ts';
import { executeWrite } from '../conversations/write-commands.ts';
import type { MessageWriter } from '../conversations/message-service.ts';
import { createEventBus } from '../console-api/events.ts';
import { clientSettingsSchema } from '../../shared/client-settings.ts';
import type { ConsoleEvent } from '../../shared/console-api.ts';
import { createTeam, type Team } from './team-service.ts';

const T0 = Date.UTC(2026, 0, 5, 9);

interface World {
  dir: string;
  store: Store;
  clock: ManualClock;
  team: Team;
  events: ConsoleEvent[];
  raised: Array<{ id: string; reason: string; recipients: string[] | undefined }>;
}

/** The team's live side over a real store, its writes run in-process as the writer thread runs them. */
function world(o: { agents?: Array<{ id: string; capacity?: number }>; autoAssign?: boolean; returnAfterOfflineMinutes?: number } = {}): World {
  const dir = mkdtempSync(join(tmpdir(), 'sb-team-'));
  const store = createStore(openDatabase(join(dir, 'db.sqlite')));
  store.clients.create('acme', clientSettingsSchema.parse({}), 0);
  store.accounts.setOwner({ id: 'boss', name: 'Boss', now: 0 });
  for (const a of o.agents ?? []) store.accounts.add({ id: a.id, name: a.id[0]!.toUpperCase() + a.id.slice(1), role: 'agent', capacity: a.capacity ?? 5, now: 0 });
  const clock = manualClock(T0);
  const writer = { submit: async (c: Parameters<MessageWriter['submit']>[0]) => executeWrite(store, c) } as unknown as MessageWriter;
  const bus = createEventBus();
  const events: ConsoleEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const raised: World['raised'] = [];
  const team = createTeam({
    store,
    writer,
    clock,
    events: bus,
    config: { autoAssign: o.autoAssign ?? true, returnAfterOfflineMinutes: o.returnAfterOfflineMinutes ?? 2 },
    raise: async (id, reason, recipients) => void raised.push({ id, reason, recipients }),
    log: () => {},
  });
  return { dir, store, clock, team, events, raised };
}

let n = 0;
/** A conversation that newly needs a human (its waiting time `at`), as ingest reports it. */
function handoff(w: World, at = w.clock.now()): string {
  const id = `c-${++n}`;
  w.store.conversations.create({ id, clientId: 'acme', channel: 'web', peer: `p-${id}`, groupId: null, customerId: `cust-${id}`, autoReply: 'active', now: at });
  w.store.conversations.flagNeedsHuman(id, at, 'handoff');
  w.team.needsHuman(id, 'handoff');
  return id;
}

const assigned = (w: World) => w.events.flatMap((e) => (e.type === 'assigned' ? [`${e.conversationId}>${e.assignee}`] : []));

describe('the team service', () => {
  let w: World;
  afterEach(() => {
    w.team.stop();
    w.store.close();
    rmSync(w.dir, { recursive: true, force: true });
  });

  describe('one person on one desktop', () => {
    beforeEach(() => (w = world()));
    it('alerts every console as before and assigns nothing', async () => {
      w.team.streamOpened('boss');
      const id = handoff(w);
      await w.team.settled();
      assert.deepEqual(w.raised, [{ id, reason: 'handoff', recipients: undefined }]);
      assert.equal(w.store.team.assigneeOf(id), null);
      assert.equal(await w.team.teamMode(), false);
      assert.equal(await w.team.autoAssignOn(), false);
    });
  });

  describe('a team', () => {
    beforeEach(() => (w = world({ agents: [{ id: 'ann', capacity: 2 }, { id: 'omar', capacity: 2 }, { id: 'lee', capacity: 0 }] })));

    it('gives a new handoff to the online agent with the fewest open, who hears of it as assigned; nobody else is alerted', async () => {
      w.team.streamOpened('ann');
      w.team.streamOpened('omar');
      w.team.streamOpened('lee');
      const first = handoff(w);
      await w.team.settled();
      const second = handoff(w);
      await w.team.settled();
      const owners = [w.store.team.assigneeOf(first), w.store.team.assigneeOf(second)];
      assert.deepEqual([...owners].sort(), ['ann', 'omar'], 'one each: the fewest open first (Lee, capacity 0, never)');
      assert.deepEqual(assigned(w), [`${first}>${owners[0]}`, `${second}>${owners[1]}`]);
      assert.deepEqual(w.raised, [], 'an assigned one raises no queue alert');
      const event = w.events.find((e) => e.type === 'assigned');
      assert.ok(event?.type === 'assigned' && event.recipients.length === 1 && event.by === null);
    });

    it('longest wait first; past capacity the rest waits in the queue, and its alert goes to admins and agents with nothing open', async () => {
      const old = handoff(w, T0 - 60_000);
      const newer = handoff(w, T0 - 30_000);
      const newest = handoff(w, T0 - 10_000);
      await w.team.settled();
      assert.deepEqual(w.raised.map((r) => r.recipients), [['ann', 'boss', 'lee', 'omar'], ['ann', 'boss', 'lee', 'omar'], ['ann', 'boss', 'lee', 'omar']], 'nobody online: the queue waits');
      w.store.accounts.setCapacity('ann', 2, 0);
      w.team.streamOpened('ann');
      await w.team.settled();
      assert.equal(w.store.team.assigneeOf(old), 'ann', 'she comes online: the longest wait goes to her first');
      assert.equal(w.store.team.assigneeOf(newer), 'ann');
      assert.equal(w.store.team.assigneeOf(newest), null, 'her capacity is 2');
      w.raised.length = 0;
      const more = handoff(w);
      await w.team.settled();
      assert.deepEqual(w.raised, [{ id: more, reason: 'handoff', recipients: ['boss', 'lee', 'omar'] }], 'Ann has two open: not hers to hear');
    });

    it('a slot that frees up is filled from the queue (what Chatwoot never did): a resolve, then the sweep', async () => {
      w.team.start();
      w.team.streamOpened('ann');
      const a = handoff(w, T0 - 3000);
      const b = handoff(w, T0 - 2000);
      const c = handoff(w, T0 - 1000);
      await w.team.settled();
      assert.deepEqual([a, b, c].map((id) => w.store.team.assigneeOf(id)), ['ann', 'ann', null]);
      w.store.conversations.resolve(a, w.clock.now(), 'Ann');
      w.team.changed();
      await w.team.settled();
      assert.equal(w.store.team.assigneeOf(c), 'ann', 'the resolve freed a slot');
      // A slot freed where no event says so (a staff line in the IM, another process): the sweep finds it.
      const d = handoff(w);
      await w.team.settled();
      assert.equal(w.store.team.assigneeOf(d), null);
      w.store.conversations.clearNeedsHuman(b);
      w.clock.advance(30_000);
      await w.team.settled();
      assert.equal(w.store.team.assigneeOf(d), 'ann');
    });

    it('an agent offline for 2 minutes gets their conversations that still need a human put back, and on to someone online', async () => {
      const closeAnn = w.team.streamOpened('ann');
      const mine = handoff(w);
      const answered = handoff(w);
      await w.team.settled();
      w.store.conversations.clearNeedsHuman(answered);
      w.team.streamOpened('omar');
      closeAnn();
      w.clock.advance(89_000);
      await w.team.settled();
      assert.equal(w.store.team.assigneeOf(mine), 'ann', 'still within her 90 s');
      w.clock.advance(1000);
      assert.ok(w.events.some((e) => e.type === 'presence' && e.agentId === 'ann' && e.presence === 'offline'));
      w.clock.advance(119_000);
      await w.team.settled();
      assert.equal(w.store.team.assigneeOf(mine), 'ann', 'offline 1:59');
      w.clock.advance(1000);
      await w.team.settled();
      assert.equal(w.store.team.assigneeOf(mine), 'omar', 'back in the queue at 2:00 offline, and Omar is online');
      assert.equal(w.store.team.assigneeOf(answered), 'ann', 'what no longer needs a human stays hers');
      const audit = w.store.audit.list(mine, 10).map((a) => JSON.parse(a.detail!) as Record<string, unknown>);
      assert.deepEqual(audit.map((d) => [d['from'], d['to']]), [['null', 'omar'].map((x) => (x === 'null' ? null : x)), ['ann', null], [null, 'ann']]);
    });

    it('an agent disabled by another process (the CLI) keeps nothing past the next 30 s sweep, even with a console still open', async () => {
      w.team.streamOpened('ann');
      const mine = handoff(w);
      await w.team.settled();
      assert.equal(w.store.team.assigneeOf(mine), 'ann');
      w.team.start();
      w.team.streamOpened('omar');
      w.store.accounts.setDisabled('ann', true, w.clock.now());
      w.clock.advance(30_000);
      await w.team.settled();
      assert.equal(w.store.team.assigneeOf(mine), 'omar', 'not after the 90 s + 2 min of an offline agent');
      assert.match(w.store.audit.list(mine, 5).map((a) => a.detail).join(' '), /agent disabled, back to the queue/);
    });

    it('after a restart, an agent who does not come back within 90 s + 2 min loses their waiting conversations', async () => {
      w.store.conversations.create({ id: 'held', clientId: 'acme', channel: 'web', peer: 'held', groupId: null, customerId: 'held', autoReply: 'active', now: T0 });
      w.store.conversations.flagNeedsHuman('held', T0, 'handoff');
      w.store.team.assign('held', 'omar', T0);
      w.team.start();
      w.team.streamOpened('ann');
      w.clock.advance(209_000);
      await w.team.settled();
      assert.equal(w.store.team.assigneeOf('held'), 'omar');
      w.clock.advance(1000);
      await w.team.settled();
      assert.equal(w.store.team.assigneeOf('held'), 'ann');
    });

    it('away keeps what you have and takes nothing new; unassigning yourself does not hand it straight back', async () => {
      w.team.streamOpened('ann');
      w.team.heartbeat('ann', { away: true, viewing: null, typing: null });
      const waiting = handoff(w);
      await w.team.settled();
      assert.equal(w.store.team.assigneeOf(waiting), null, 'away: not auto-assigned');
      w.team.heartbeat('ann', { away: false, viewing: null, typing: null });
      await w.team.settled();
      assert.equal(w.store.team.assigneeOf(waiting), 'ann', 'back online: picked up');
      w.store.team.assign(waiting, null, w.clock.now());
      w.team.assignedByHand(waiting, null, 'ann', { id: 'ann', name: 'Ann' });
      await w.team.settled();
      assert.equal(w.store.team.assigneeOf(waiting), null, 'she gave it up: it waits for someone else');
      w.team.streamOpened('omar');
      await w.team.settled();
      assert.equal(w.store.team.assigneeOf(waiting), 'omar');
    });

    it('with auto-assignment off, the queue waits for someone to take it, and its watchers hear of it', async () => {
      w.team.stop();
      w.store.close();
      rmSync(w.dir, { recursive: true, force: true });
      w = world({ agents: [{ id: 'ann' }], autoAssign: false });
      w.team.streamOpened('ann');
      const id = handoff(w);
      await w.team.settled();
      assert.equal(w.store.team.assigneeOf(id), null);
      assert.deepEqual(w.raised, [{ id, reason: 'handoff', recipients: ['ann', 'boss'] }]);
    });
  });
});
