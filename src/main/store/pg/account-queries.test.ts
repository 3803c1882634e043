import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason } from '../../../../test/helpers/postgres.ts';
import { pgAccountQueries } from './account-queries.ts';
import { blockedOrDone, openSqliteHarness, pgHarnesses, type TeamHarness } from './team-stores.fixture.ts';

const MIN = 60_000;

/** Every accounts function, with the edges: unknown ids, null columns, expiry, the owner's rename. */
async function scenario(h: TeamHarness): Promise<unknown[]> {
  const a = h.accounts;
  const out: unknown[] = [];
  out.push(await a.owner(), await a.list());
  out.push(await a.setOwner({ id: 'boss', name: '老板', now: 1 }));
  out.push(await a.owner());
  out.push(await a.add({ id: 'ann', name: 'Ann', role: 'agent', now: 2 }));
  out.push(await a.add({ id: 'Zed', name: 'Zed', role: 'admin', capacity: 3, now: 3 }));
  out.push(await a.add({ id: 'émile', name: 'Émile', role: 'agent', capacity: 0, now: 4 }));
  out.push(await a.get('ann'), await a.get('nobody'));
  out.push(await a.rename('ann', 'Ann 安', 5), await a.rename('nobody', 'x', 5));
  out.push(await a.setRole('boss', 'agent', 6), await a.setRole('ann', 'admin', 6), await a.setRole('nobody', 'admin', 6));
  out.push(await a.setCapacity('ann', 7, 7), await a.setCapacity('nobody', 7, 7));
  out.push(await a.setDisabled('Zed', true, 8), await a.setDisabled('nobody', true, 8));
  out.push(await a.setPasswordHash('ann', 'scrypt$abc', 9), await a.setPasswordHash('nobody', 'x', 9));
  out.push(await a.get('ann'));
  out.push(await a.clearPassword('ann', 10), await a.clearPassword('nobody', 10), await a.get('ann'));

  // Links: one per agent, live until expiry (strictly before), used once.
  await a.replaceSignInLink('ann', 'link-1', 1000, 11);
  await a.replaceSignInLink('ann', 'link-2', 2000, 12);
  await a.replaceSignInLink('Zed', 'link-z', 3000, 12);
  await a.replaceSignInLink('boss', 'link-b', 500, 12);
  out.push(await a.peekSignInLink('link-1', 100), await a.peekSignInLink('link-2', 100), await a.peekSignInLink('link-2', 2000), await a.peekSignInLink('nope', 0));
  out.push(await a.takeSignInLink('link-2', 2000), await a.takeSignInLink('link-2', 100), await a.takeSignInLink('link-2', 100), await a.peekSignInLink('link-2', 100));
  await a.replaceSignInLink('ann', 'link-3', 4000, 13);

  // Sessions: touched at most once a minute, ended once.
  await a.addSession({ digest: 's-ann', agentId: 'ann', address: '127.0.0.1', now: 20 });
  await a.addSession({ digest: 's-ann-2', agentId: 'ann', address: null, now: 30 });
  await a.addSession({ digest: 's-zed', agentId: 'Zed', address: '::1', now: 40 });
  await a.addSession({ digest: 's-boss', agentId: 'boss', address: null, now: 50 });
  out.push(await a.session('s-ann'), await a.session('s-ann-2'), await a.session('none'));
  await a.touchSession('s-ann', 20 + MIN - 1);
  out.push((await a.session('s-ann'))?.lastSeenAt);
  await a.touchSession('s-ann', 20 + MIN + 1);
  out.push((await a.session('s-ann'))?.lastSeenAt);
  out.push(await a.endSession('s-ann-2', 'signed_out', 100), await a.endSession('s-ann-2', 'again', 101), await a.endSession('none', 'x', 101));
  out.push(await a.session('s-ann-2'));
  out.push([...(await a.activity(100, 10, 10))].sort(([x], [y]) => (x < y ? -1 : 1)));
  out.push([...(await a.activity(3500, 25, 0))].sort(([x], [y]) => (x < y ? -1 : 1)));
  out.push(await a.endSessionsOf('ann', 'disabled', 200), await a.endSessionsOf('ann', 'disabled', 201));
  out.push(await a.session('s-ann'));

  // The owner renames their id: their sessions and links name the old one and go.
  out.push(await a.setOwner({ id: 'boss', name: 'Boss', now: 300 }));
  out.push(await a.session('s-boss'));
  out.push(await a.setOwner({ id: 'chief', name: 'Chief', now: 301 }));
  out.push(await a.session('s-boss'), await a.peekSignInLink('link-b', 0), await a.owner());

  await a.dropSignInLinks('Zed');
  out.push(await a.peekSignInLink('link-z', 0));
  out.push(await a.remove('ann'), await a.remove('ann'), await a.session('s-ann'), await a.peekSignInLink('link-3', 0));
  out.push(await a.list());
  return out;
}

describe('accounts on PostgreSQL: the same results as SQLite', { skip: postgresSkipReason() }, () => {
  const openPg = pgHarnesses('accounts');

  it('runs every accounts function as SQLite does', async () => {
    const sqlite = openSqliteHarness();
    const pg = await openPg();
    try {
      const expected = await scenario(sqlite);
      const got = await scenario(pg);
      assert.deepEqual(got, expected);
      // Equal but wrong would still fail here: a few of the answers spelled out.
      assert.deepEqual(expected[0], null, 'no owner at first');
      assert.deepEqual(got.at(-1), [
        { id: 'Zed', name: 'Zed', role: 'admin', capacity: 3, passwordHash: null, disabled: true, owner: false, createdAt: 3, updatedAt: 8 },
        { id: 'chief', name: 'Chief', role: 'admin', capacity: 0, passwordHash: null, disabled: false, owner: true, createdAt: 1, updatedAt: 301 },
        { id: 'émile', name: 'Émile', role: 'agent', capacity: 0, passwordHash: null, disabled: false, owner: false, createdAt: 4, updatedAt: 4 },
      ], 'byte order, as SQLite sorts');
      assert.deepEqual([...(await pg.accounts.activity(100, 0, 0))].sort(([x], [y]) => (x < y ? -1 : 1)), [
        ['Zed', { lastSignInAt: 40, openSessions: 1, linkExpiresAt: null }],
      ], 'what is left after the removals and the owner\'s new id');
    } finally {
      await sqlite.close();
      await pg.close();
    }
  });

  it('a sign-in link is used once across nodes: two transactions take it at once, one gets the agent', async () => {
    const h = await openPg();
    await h.accounts.add({ id: 'ann', name: 'Ann', role: 'agent', now: 1 });
    await h.accounts.replaceSignInLink('ann', 'link', 1000, 1);
    const t1 = await h.transaction();
    const t2 = await h.transaction();
    assert.equal(await pgAccountQueries(t1.client).takeSignInLink('link', 10), 'ann');
    const second = pgAccountQueries(t2.client).takeSignInLink('link', 10);
    assert.equal(await blockedOrDone(h.pool, t2.pid, second), 'blocked', 'the second waits for the first');
    await t1.commit();
    assert.equal(await second, null, 'used up by the first');
    await t2.commit();
  });

  it('two nodes replacing an agent\'s link at once leave one link, the later one', async () => {
    const h = await openPg();
    await h.accounts.add({ id: 'ann', name: 'Ann', role: 'agent', now: 1 });
    const t1 = await h.transaction();
    const t2 = await h.transaction();
    await pgAccountQueries(t1.client).replaceSignInLink('ann', 'first', 1000, 1);
    const second = pgAccountQueries(t2.client).replaceSignInLink('ann', 'second', 1000, 2);
    assert.equal(await blockedOrDone(h.pool, t2.pid, second), 'blocked');
    await t1.commit();
    await second;
    await t2.commit();
    const links = (await h.pool.query('SELECT digest FROM sign_in_links')).rows.map((r: { digest: string }) => r.digest);
    assert.deepEqual(links, ['second']);
  });
});
