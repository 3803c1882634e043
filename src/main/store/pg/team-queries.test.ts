import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason } from '../../../../test/helpers/postgres.ts';
import { ARRIVED_TEXT_MAX } from '../../../shared/console-api.ts';
import { pgTeamQueries } from './team-queries.ts';
import { blockedOrDone, openSqliteHarness, pgHarnesses, type TeamHarness } from './team-stores.fixture.ts';

let seq = 0;

async function conversation(h: TeamHarness, id: string, o: { needsHuman?: number; at?: number } = {}): Promise<void> {
  await h.seed.conversations.create({ id, clientId: 'acme', channel: 'web', peer: `p-${id}`, groupId: null, customerId: `cust-${id}`, autoReply: 'active', now: o.at ?? 1000 });
  if (o.needsHuman !== undefined) await h.seed.conversations.flagNeedsHuman(id, o.needsHuman, 'handoff');
}

function message(h: TeamHarness, conversationId: string, role: 'customer' | 'staff', content: string, at: number, from = role === 'customer' ? 'cust' : 'staffer') {
  return h.seed.messages.insert({
    conversationId, clientId: 'acme', eventType: 'website_dialog', msgId: `m-${++seq}`, role, fromUserId: from, fromUserType: null, content,
    messageInfo: '{}', createTimestamp: null, receivedAt: at, replyScheduled: null, replyReason: null,
  });
}

function operatorReply(h: TeamHarness, conversationId: string, afterMessageId: number, by: { id: string; name: string }, content: string, at: number) {
  return h.seed.messages.insertReply({
    conversationId, kind: 'operator', msgId: `r-${++seq}`, replyTo: [], afterMessageId, content, handoff: false, engine: 'operator', confidence: null, sources: [], operator: by, createdAt: at,
  });
}

async function setUp(h: TeamHarness): Promise<void> {
  seq = 0;
  await h.addClient('acme', 0);
  await h.accounts.setOwner({ id: 'owner', name: 'Owner', now: 0 });
  await h.accounts.add({ id: 'ann', name: 'Ann', role: 'agent', now: 0 });
  await h.accounts.add({ id: 'omar', name: 'Omar', role: 'agent', now: 0 });
}

/** Every team function, with the edges: unknown conversations, ties, capacity, the author's own replies, clipping, Chinese text. */
async function scenario(h: TeamHarness): Promise<unknown[][]> {
  await setUp(h);
  const t = h.team;
  const out: unknown[][] = [];
  const step = (...values: unknown[]) => out.push(values);
  await conversation(h, 'calm');
  await conversation(h, 'w-b', { needsHuman: 500 });
  await conversation(h, 'w-a', { needsHuman: 500 });
  await conversation(h, 'w-old', { needsHuman: 100 });
  await conversation(h, 'w-new', { needsHuman: 900 });
  step(await t.assigneeOf('calm'), await t.assigneeOf('nope'), await t.waitingUnassigned(10), await t.waitingUnassigned(2));
  step(await t.claim('calm', 'ann', 5, 10), await t.claim('w-old', 'ann', 1, 10), await t.claim('w-old', 'omar', 5, 11), await t.claim('w-a', 'ann', 1, 12), await t.claim('nope', 'ann', 5, 12));
  step(await t.takeIfFree('w-old', 'omar', 13), await t.takeIfFree('calm', 'omar', 13), await t.takeIfFree('nope', 'omar', 13));
  step(await t.assign('w-b', 'omar', 14), await t.assign('w-a', 'omar', 14), await t.assign('nope', 'omar', 14));
  step(await t.assigneeOf('w-old'), await t.assigneeOf('w-b'));
  step([...(await t.openCounts())], (await t.withOpen()).sort(), await t.waitingUnassigned(10));
  step((await t.returnToQueue('omar')).sort(), await t.returnToQueue('omar'), await t.assigneeOf('calm'), [...(await t.openCounts())]);
  step(await t.assign('w-old', null, 15), await t.assigneeOf('w-old'), await t.withOpen(), await t.openCounts());

  // What arrived after a draft's base: customers and staff (named by people), other operators' replies, clipped.
  await h.seed.people.remember('acme', 'cust', '顾客小王', 1);
  const m1 = await message(h, 'w-a', 'customer', 'first', 2000);
  const m2 = await message(h, 'w-a', 'customer', '退款怎么办？', 2010);
  const m3 = await message(h, 'w-a', 'staff', 'x'.repeat(ARRIVED_TEXT_MAX + 10), 2020);
  const r1 = await operatorReply(h, 'w-a', m3, { id: 'ann', name: 'Ann' }, 'mine', 2030);
  const r2 = await operatorReply(h, 'w-a', m3, { id: 'omar', name: 'Omar' }, '好的 😀'.repeat(80), 2005);
  step(await t.latestReplyId('w-a'), await t.latestReplyId('calm'), await t.latestReplyId('nope'));
  step(await t.arrivedSince('w-a', { messageId: m1, replyId: 0 }, 'ann'));
  step(await t.arrivedSince('w-a', { messageId: m3, replyId: r1 }, 'ann'), await t.arrivedSince('w-a', { messageId: m2, replyId: r2 }, 'omar'), await t.arrivedSince('nope', { messageId: 0, replyId: 0 }, 'ann'));

  step(await t.insertNote({ conversationId: 'w-a', msgId: 'n-1', afterMessageId: m3, afterReplyId: r2, author: { id: 'ann', name: 'Ann' }, content: '请看 @omar', mentions: ['omar'], now: 3000 }));
  step(await t.insertNote({ conversationId: 'w-a', msgId: 'n-2', afterMessageId: m3, afterReplyId: r2, author: { id: 'omar', name: 'Omar' }, content: 'ok', mentions: [], now: 3001 }));

  // Read markers: per account, never back, counted from the floor.
  const ann = { id: 'ann', floor: 0 };
  step(await t.unread(ann, 'w-a'), await t.unread({ id: 'ann', floor: 2005 }, 'w-a'), await t.unread(ann, 'nope'), await t.unread(ann, 'calm'));
  step(await t.markRead(ann, 'w-a', m1), await t.markRead(ann, 'w-a', 0), await t.markRead({ id: 'omar', floor: 0 }, 'w-a', m2), await t.unread(ann, 'w-a'));
  step(await t.markRead(ann, 'w-a', m3));

  // The owner adopts the console's shared marker, keeping their own where they have one.
  await h.sharedMarker('w-b', m2);
  await h.sharedMarker('w-a', m2);
  await t.markRead({ id: 'owner', floor: 0 }, 'w-a', m1);
  await t.adoptSharedMarkers('owner');
  await t.adoptSharedMarkers('owner');
  step(await t.unread({ id: 'owner', floor: 0 }, 'w-a'), await t.unread({ id: 'owner', floor: 0 }, 'w-b'));
  return out;
}

describe('team on PostgreSQL: the same results as SQLite, and claims that race across nodes', { skip: postgresSkipReason() }, () => {
  const openPg = pgHarnesses('team');

  it('runs every team function as SQLite does', async () => {
    const sqlite = openSqliteHarness();
    const pg = await openPg();
    try {
      const expected = await scenario(sqlite);
      const got = await scenario(pg);
      assert.deepEqual(got, expected);
      assert.deepEqual(got[0]![2], ['w-old', 'w-a', 'w-b', 'w-new'], 'longest wait first, ties by id');
      assert.deepEqual(got[1], [false, true, false, false, false], 'calm, ann claims, omar too late, ann at capacity, unknown');
      assert.deepEqual(got[2], [false, true, false], 'the claim stands; calm taken by a reply; unknown');
      assert.deepEqual(got.at(-4), [2, 1, 0, 0], 'unread: all customer lines; since the floor; unknown; none');
      assert.deepEqual(got.at(-3), [1, 1, 0, 1], 'a marker never moves back; per account');
      assert.deepEqual(got.at(-1), [1, 0], 'the owner kept their own marker on w-a (one customer line after it), adopted the shared one on w-b (nothing there)');
      const clipped = (got[9]![0] as Array<{ text: string }>).find((e) => e.text.startsWith('x'))!;
      assert.equal([...clipped.text].length, ARRIVED_TEXT_MAX);
    } finally {
      await sqlite.close();
      await pg.close();
    }
  });

  async function queue(h: TeamHarness, capacity: { ann: number }) {
    await setUp(h);
    await h.accounts.setCapacity('ann', capacity.ann, 1);
    await conversation(h, 'c1', { needsHuman: 1 });
    await conversation(h, 'c2', { needsHuman: 2 });
  }

  for (const [who, agents] of [['two agents', ['ann', 'omar']], ['the same agent', ['ann', 'ann']]] as const) {
    it(`two nodes claiming the same conversation for ${who} in two open transactions: exactly one wins`, async () => {
      const h = await openPg();
      await queue(h, { ann: 5 });
      const t1 = await h.transaction();
      const t2 = await h.transaction();
      assert.equal(await pgTeamQueries(t1.client).claim('c1', agents[0], 5, 10), true);
      const second = pgTeamQueries(t2.client).claim('c1', agents[1], 5, 11);
      assert.equal(await blockedOrDone(h.pool, t2.pid, second), 'blocked', 'the second waits for the first to commit');
      await t1.commit();
      assert.equal(await second, false);
      await t2.commit();
      assert.equal(await h.team.assigneeOf('c1'), agents[0]);
    });
  }

  it('two nodes claiming two conversations for an agent with room for one: the second counts the first\'s claim', async () => {
    const h = await openPg();
    await queue(h, { ann: 1 });
    const t1 = await h.transaction();
    const t2 = await h.transaction();
    assert.equal(await pgTeamQueries(t1.client).claim('c1', 'ann', 1, 10), true);
    const second = pgTeamQueries(t2.client).claim('c2', 'ann', 1, 11);
    assert.equal(await blockedOrDone(h.pool, t2.pid, second), 'blocked');
    await t1.commit();
    assert.equal(await second, false, 'Ann is at her capacity of 1');
    await t2.commit();
    assert.deepEqual([...(await h.team.openCounts())], [['ann', 1]]);
  });

  it('a claim whose rival rolled back wins; a reply taking a conversation races a claim and one wins', async () => {
    const h = await openPg();
    await queue(h, { ann: 5 });
    let t1 = await h.transaction();
    let t2 = await h.transaction();
    assert.equal(await pgTeamQueries(t1.client).claim('c1', 'ann', 5, 10), true);
    const second = pgTeamQueries(t2.client).claim('c1', 'omar', 5, 11);
    assert.equal(await blockedOrDone(h.pool, t2.pid, second), 'blocked');
    await t1.rollback();
    assert.equal(await second, true);
    await t2.commit();
    assert.equal(await h.team.assigneeOf('c1'), 'omar');

    t1 = await h.transaction();
    t2 = await h.transaction();
    assert.equal(await pgTeamQueries(t1.client).takeIfFree('c2', 'omar', 12), true);
    const claim = pgTeamQueries(t2.client).claim('c2', 'ann', 5, 13);
    assert.equal(await blockedOrDone(h.pool, t2.pid, claim), 'blocked');
    await t1.commit();
    assert.equal(await claim, false);
    await t2.commit();
    assert.equal(await h.team.assigneeOf('c2'), 'omar');
  });
});
