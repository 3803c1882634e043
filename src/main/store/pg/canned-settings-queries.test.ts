import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason } from '../../../../test/helpers/postgres.ts';
import { clientSettingsSchema } from '../../../shared/client-settings.ts';
import { pgClientAdminStore } from './client-queries.ts';
import { openSqliteHarness, pgHarnesses, type TeamHarness } from './team-stores.fixture.ts';

/** Every canned function: SQLite's ASCII-only case folding in order and search, LIKE metacharacters as text, Chinese. */
async function canned(h: TeamHarness): Promise<unknown[][]> {
  const c = h.canned;
  const out: unknown[][] = [];
  const step = (...values: unknown[]) => out.push(values);
  step(await c.list(), await c.list('x'), await c.get(1));
  const ids = [
    await c.add('banana', 'Yellow fruit', 1),
    await c.add('Apple', '100% juice_box', 2),
    await c.add('apple', 'lower case twin', 3),
    await c.add('École', 'Straße ÉTÉ', 4),
    await c.add('退款', '七天内可以退款。', 5),
    await c.add('Zebra', 'stripes', 6),
  ];
  step(ids, await c.list(), await c.list(''));
  step(await c.list('APPLE'), await c.list('%'), await c.list('_box'), await c.list('pp_e'), await c.list('退款'), await c.list('七天'));
  // SQLite's lower() folds A–Z only: 'École' holds no 'éc' to its search, 'été' is not found in 'ÉTÉ'.
  step(await c.list('éc'), await c.list('été'), await c.list('cole'), await c.list('straße'));
  step(await c.get(ids[1]!), await c.get(999));
  step(await c.update(ids[0]!, 'Banana', 'Still yellow', 7), await c.update(999, 'x', 'y', 7), await c.get(ids[0]!));
  step(await c.remove(ids[2]!), await c.remove(ids[2]!), await c.list());
  return out;
}

async function settings(h: TeamHarness): Promise<unknown[][]> {
  const s = h.settings;
  const out: unknown[][] = [];
  const step = (...values: unknown[]) => out.push(values);
  step(await s.get('kb_threshold'));
  await s.put('kb_threshold', '0.6');
  await s.put('kb_threshold', '0.7');
  await s.put('令牌', '{"salt":"é"}');
  step(await s.get('kb_threshold'), await s.get('令牌'), await s.get('nope'));
  await s.delete('kb_threshold');
  await s.delete('nope');
  step(await s.get('kb_threshold'), await s.get('令牌'), typeof (await s.dataVersion()));
  return out;
}

describe('canned replies and settings on PostgreSQL: the same results as SQLite', { skip: postgresSkipReason() }, () => {
  const openPg = pgHarnesses('canned');

  it('runs every canned and settings function as SQLite does', async () => {
    const sqlite = openSqliteHarness();
    const pg = await openPg();
    try {
      const expected = [await canned(sqlite), await settings(sqlite)];
      const got = [await canned(pg), await settings(pg)];
      assert.deepEqual(got, expected);
      const titles = (list: unknown) => (list as Array<{ title: string }>).map((r) => r.title);
      assert.deepEqual(titles(got[0]![1]![1]), ['Apple', 'apple', 'banana', 'Zebra', 'École', '退款'], 'A–Z folded, then bytes; ties by id');
      assert.deepEqual(got[0]![2]!.map(titles), [['Apple', 'apple'], ['Apple'], ['Apple'], [], ['退款'], ['退款']], '% and _ are text');
      assert.deepEqual(got[0]![3]!.map(titles), [[], [], ['École'], ['École']]);
      assert.deepEqual(got[1], [[undefined], ['0.7', '{"salt":"é"}', undefined], [undefined, '{"salt":"é"}', 'number']]);
    } finally {
      await sqlite.close();
      await pg.close();
    }
  });

  it("dataVersion moves when clients, their secrets, engines or settings change (whoever changed them), and stays put otherwise", async () => {
    const h = await openPg();
    const v = () => h.settings.dataVersion();
    const seen = [await v()];
    const next = async (why: string) => {
      const now = await v();
      assert.ok(Number.isSafeInteger(now));
      assert.ok(!seen.includes(now), why);
      seen.push(now);
    };
    assert.equal(await v(), seen[0], 'nothing changed');
    const clients = pgClientAdminStore(h.pool).clients;
    await clients.create('shop', clientSettingsSchema.parse({}), 1);
    await next('a client added');
    await clients.setEnabled('shop', false, 2);
    await next('a client disabled');
    await clients.addSecret('shop', 'sealed-1', 'abcd', 3);
    await next('a secret added');
    await h.pool.query('UPDATE client_secrets SET retired_at = 4');
    await next('a secret retired');
    await h.pool.query(`INSERT INTO engines (name, kind, config, created_at, updated_at) VALUES ('gpt', 'openai', '{}', 1, 1)`);
    await next('an engine added');
    await h.settings.put('kb_threshold', '0.5');
    await next('a setting put');
    const before = await v();
    await h.canned.add('t', 'c', 1);
    await h.accounts.add({ id: 'ann', name: 'Ann', role: 'agent', now: 1 });
    assert.equal(await v(), before, 'other tables do not move it: no needless rebuild of the clients');
    await h.settings.delete('kb_threshold');
    assert.equal(await v(), seen.at(-2), 'a setting deleted: the content as before it was put, the version as then (a cache of it is right)');
  });
});
