import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason } from '../../../../test/helpers/postgres.ts';
import type { StoreContract } from '../contract.ts';
import { bothStores, holdTransaction, waitForLockWait } from './both-stores.fixture.ts';
import { pgKbQueries } from './kb-queries.ts';
import { pgKbVectorQueries } from './kb-vector-queries.ts';

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5);
type Kb = StoreContract['kb'];
type Vectors = StoreContract['kbVectors'];

const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(Buffer.from(b));
const ids = (entries: Array<{ id: number }>): number[] => entries.map((e) => e.id);

/** Every kb function once or more, edge cases included; what it returns is compared between the stores. */
async function kbScenario(kb: Kb) {
  const empty = { count: await kb.count(), list: await kb.list(10), all: await kb.all(), search: await kb.search('x', 10), unknown: await kb.get(1) };
  const v0 = await kb.version();
  const refund = await kb.add('How do I get a refund?', 'Within 7 days.', T0, ['money back', ' Money back! ', '', 'how do I get a REFUND']);
  const v1 = await kb.version();
  const cn = await kb.add('怎么退款', '七天内可以申请退款。', T0 + 1, ['如何退款']);
  const sale = await kb.add('100% off_sale?', 'Codes with a \\ backslash are not accepted.', T0 + 2);
  const ship = await kb.add('Shipping', 'We ship worldwide.', T0 + 3);
  const v2 = await kb.version();
  const edits = {
    keepPhrasings: await kb.update(cn, '怎么退款？', '七天内。', T0 + 10),
    newPhrasings: await kb.update(ship, 'Shipping', 'Worldwide, in 3 days.', T0 + 11, ['delivery', 'SHIPPING!', 'delivery ']),
    unknown: await kb.update(999, 'q', 'a', T0 + 12),
    unknownWithPhrasings: await kb.update(999, 'q', 'a', T0 + 12, ['p']),
    phrasing: await kb.addPhrasing(refund, 'refund please', T0 + 20),
    repeatedPhrasing: await kb.addPhrasing(refund, 'MONEY BACK', T0 + 21),
    phrasingOfUnknown: await kb.addPhrasing(999, 'x', T0 + 22),
  };
  const v3 = await kb.version();
  const search = {
    asciiCase: ids(await kb.search('REFUND', 10)),
    chinese: ids(await kb.search('退款', 10)),
    inPhrasing: ids(await kb.search('如何', 10)),
    inAnswer: ids(await kb.search('worldwide', 10)),
    percent: ids(await kb.search('100%', 10)),
    underscore: ids(await kb.search('_', 10)),
    backslash: ids(await kb.search('\\', 10)),
    limited: ids(await kb.search('e', 2)),
    none: ids(await kb.search('nothing like this', 10)),
  };
  const read = { get: await kb.get(refund), page1: await kb.list(2), page2: await kb.list(2, 2), pastEnd: await kb.list(2, 10), count: await kb.count(), all: await kb.all() };
  const removed = { first: await kb.remove(sale), again: await kb.remove(sale), gone: await kb.get(sale), count: await kb.count() };
  const v4 = await kb.version();
  return {
    empty,
    ids: [refund, cn, sale, ship],
    edits,
    search,
    read,
    removed,
    version: { stable: same(v4, await kb.version()), moves: [!same(v0, v1), !same(v1, v2), !same(v2, v3), !same(v3, v4)] },
  };
}

const vec = (...xs: number[]): Float32Array => new Float32Array(xs);

async function vectorScenario(kb: Kb, vectors: Vectors) {
  const a = await kb.add('a', 'A', T0);
  const b = await kb.add('b', 'B', T0);
  const empty = { list: await vectors.forModel('m1'), count: await vectors.count('m1') };
  const saves = [
    await vectors.save(b, 'm1', [], [{ hash: 'h9', vector: vec(9, 9) }], T0),
    await vectors.save(a, 'm1', [], [{ hash: 'hb', vector: vec(1, 2) }, { hash: 'ha', vector: vec(0.5, -1.25) }, { hash: 'hc', vector: vec(3, 4) }], T0),
    // hc is no longer a text of a's: it goes; ha is stored again with another vector (a model re-run).
    await vectors.save(a, 'm1', ['hb'], [{ hash: 'ha', vector: vec(7, 8) }], T0 + 1),
    await vectors.save(a, 'm2', [], [{ hash: 'ha', vector: vec(1, 1, 1) }], T0),
    await vectors.save(999, 'm1', [], [{ hash: 'hx', vector: vec(1) }], T0),
    await vectors.save(a, 'm1', ['ha', 'hb'], [], T0 + 2),
  ];
  const listed = { m1: await vectors.forModel('m1'), m2: await vectors.forModel('m2'), counts: [await vectors.count('m1'), await vectors.count('m2'), await vectors.count('none')] };
  await kb.remove(a);
  return { empty, saves, listed, afterRemove: { m1: await vectors.forModel('m1'), count: await vectors.count('m2') } };
}

describe('the knowledge base on PostgreSQL and on SQLite', { skip: postgresSkipReason() }, () => {
  const stores = bothStores('kbq');

  it('gives the same entries, searches, edits, counts and version changes', async () => {
    const sqlite = await kbScenario(stores.sqlite().kb);
    const { pools } = await stores.postgres();
    const postgres = await kbScenario(pgKbQueries(pools[0]!));
    assert.deepEqual(postgres, sqlite);
    // Equal is not enough: what both must have said.
    const [refund, cn, sale, ship] = sqlite.ids;
    assert.deepEqual(sqlite.empty, { count: 0, list: [], all: [], search: [], unknown: undefined });
    assert.deepEqual(sqlite.edits, { keepPhrasings: true, newPhrasings: true, unknown: false, unknownWithPhrasings: false, phrasing: true, repeatedPhrasing: true, phrasingOfUnknown: false });
    assert.deepEqual(sqlite.read.get, { id: refund, question: 'How do I get a refund?', answer: 'Within 7 days.', phrasings: ['money back', 'refund please'], createdAt: T0, updatedAt: T0 + 21 });
    assert.deepEqual(sqlite.read.all.map((e) => e.phrasings), [['money back', 'refund please'], ['如何退款'], [], ['delivery']]);
    assert.deepEqual(sqlite.search, {
      asciiCase: [refund],
      chinese: [cn],
      inPhrasing: [cn],
      inAnswer: [ship],
      percent: [sale],
      underscore: [sale],
      backslash: [sale],
      limited: [refund, sale],
      none: [],
    });
    assert.deepEqual(ids(sqlite.read.page1), [refund, cn]);
    assert.deepEqual(ids(sqlite.read.page2), [sale, ship]);
    assert.deepEqual(sqlite.removed, { first: true, again: false, gone: undefined, count: 3 });
    assert.deepEqual(sqlite.version, { stable: true, moves: [true, true, true, true] });
  });

  it('folds case beyond ASCII in a search (SQLite folds ASCII only)', async () => {
    const { pools } = await stores.postgres();
    const kb = pgKbQueries(pools[0]!);
    const id = await kb.add('Ÿ ÉTÉ Straße', 'answer', T0);
    assert.deepEqual(ids(await kb.search('été', 10)), [id]);
    assert.deepEqual(ids(await kb.search('ÿ', 10)), [id]);
  });

  it('stores, replaces, prunes and lists embeddings the same way', async () => {
    const sqliteStore = stores.sqlite();
    const sqlite = await vectorScenario(sqliteStore.kb, sqliteStore.kbVectors);
    const { pools } = await stores.postgres();
    const postgres = await vectorScenario(pgKbQueries(pools[0]!), pgKbVectorQueries(pools[0]!));
    assert.deepEqual(postgres, sqlite);
    assert.deepEqual(sqlite.saves, [1, 3, 1, 1, 0, 0]);
    assert.deepEqual(
      sqlite.listed.m1.map((v) => [v.entryId, v.textHash, [...v.vector]]),
      [[1, 'ha', [7, 8]], [1, 'hb', [1, 2]], [2, 'h9', [9, 9]]],
    );
    assert.deepEqual(sqlite.listed.counts, [3, 1, 0]);
    assert.deepEqual(sqlite.afterRemove, { m1: [{ entryId: 2, textHash: 'h9', vector: vec(9, 9) }], count: 0 });
  });

  it("loses neither of two nodes' phrasings added to one entry at once", async () => {
    const { pools } = await stores.postgres(2);
    const [a, b] = [pgKbQueries(pools[0]!), pgKbQueries(pools[1]!)];
    const id = await a.add('Can I pay by card?', 'Yes.', T0, ['card ok?']);
    const held = await holdTransaction(pools[0]!, (tx) => pgKbQueries(tx).addPhrasing(id, 'visa?', T0 + 1));
    const second = b.addPhrasing(id, 'mastercard?', T0 + 2);
    await waitForLockWait(pools[0]!);
    await held.commit();
    assert.equal(await second, true);
    assert.deepEqual((await a.get(id))?.phrasings, ['card ok?', 'visa?', 'mastercard?']);

    // An edit that keeps the phrasings, racing an added one, keeps it too.
    const held2 = await holdTransaction(pools[0]!, (tx) => pgKbQueries(tx).addPhrasing(id, 'amex?', T0 + 3));
    const edit = b.update(id, 'Can I pay by card?', 'Yes, any card.', T0 + 4);
    await waitForLockWait(pools[0]!);
    await held2.commit();
    assert.equal(await edit, true);
    assert.deepEqual(await a.get(id), { id, question: 'Can I pay by card?', answer: 'Yes, any card.', phrasings: ['card ok?', 'visa?', 'mastercard?', 'amex?'], createdAt: T0, updatedAt: T0 + 4 });
  });

  it('edits of an entry another node removes meanwhile say false, and its embeddings are not stored', async () => {
    const { pools } = await stores.postgres(2);
    const [a, b] = [pgKbQueries(pools[0]!), pgKbQueries(pools[1]!)];
    const vectors = pgKbVectorQueries(pools[1]!);
    for (const edit of [
      (id: number) => b.update(id, 'q2', 'a2', T0 + 1),
      (id: number) => b.update(id, 'q2', 'a2', T0 + 1, ['p']),
      (id: number) => b.addPhrasing(id, 'p', T0 + 1),
      (id: number) => b.remove(id),
      (id: number) => vectors.save(id, 'm', [], [{ hash: 'h', vector: vec(1) }], T0 + 1),
    ]) {
      const id = await a.add('q', 'a', T0);
      const held = await holdTransaction(pools[0]!, (tx) => pgKbQueries(tx).remove(id));
      const result = edit(id);
      await waitForLockWait(pools[0]!);
      await held.commit();
      assert.equal(Number(await result), 0, String(edit));
      assert.equal(await b.get(id), undefined);
    }
    assert.equal(await vectors.count('m'), 0);
  });
});
