import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason } from '../../../../test/helpers/postgres.ts';
import type { StoreContract } from '../contract.ts';
import { bothStores, holdTransaction, seed, waitForLockWait } from './both-stores.fixture.ts';
import { pgProposalQueries } from './proposal-queries.ts';
import { pgProposalSourceQueries } from './proposal-source-queries.ts';
import { inPgTransaction } from './transaction.ts';

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5);
const ANN = { id: 'a1', name: 'Ann' };
const BO = { id: 'a2', name: 'Bo' };

async function proposalScenario(p: StoreContract['proposals']) {
  const empty = {
    list: await p.list('pending', 10),
    count: await p.pendingCount(),
    unknown: await p.get(1),
    duplicate: await p.duplicate('v1', 'q', 'a'),
    changes: await p.pendingChanges(),
    decideNone: await p.decide([], { state: 'rejected', by: ANN, at: T0, reason: null, resultEntryId: null }),
  };
  const base = { source: 'handoff' as const, entryId: null, conversationId: 'v1', messageIds: ['m1', 'm2'], operator: ANN };
  const p1 = await p.add({ ...base, kind: 'entry', question: 'How do I get a refund?', answer: 'Within 7 days.', now: T0 });
  const p2 = await p.add({ ...base, kind: 'entry', question: 'how do i get a refund', answer: 'In a week.', operator: null, messageIds: [], now: T0 + 1 });
  const p3 = await p.add({ ...base, kind: 'phrasing', source: 'correction', question: '怎么退款', answer: '七天内', entryId: 7, conversationId: null, now: T0 + 2 });
  const p4 = await p.add({ ...base, kind: 'entry', source: 'agent', question: 'Do you ship abroad?', answer: 'Yes.', now: T0 + 3 });
  const p5 = await p.add({ ...base, kind: 'phrasing', question: 'refund pls', answer: 'x', entryId: 3, now: T0 + 4 });
  const found = { duplicate: await p.duplicate('v1', 'How do I get a refund?', 'Within 7 days.'), other: await p.duplicate('v1', 'How do I get a refund?', 'no'), changes: await p.pendingChanges() };
  const edits = [
    await p.edit(p5, { question: 'Refund please?', answer: 'Within 7 days.', entryId: null }, T0 + 10),
    await p.edit(p3, { question: '如何退款', answer: '七天内', entryId: 9 }, T0 + 11),
    await p.edit(999, { question: 'q', answer: 'a', entryId: null }, T0 + 12),
  ];
  const decisions = [
    await p.decide([p1, p2, p1, 999], { state: 'approved', by: BO, at: T0 + 20, reason: null, resultEntryId: 5 }),
    await p.decide([p1], { state: 'rejected', by: ANN, at: T0 + 21, reason: 'late', resultEntryId: null }),
    await p.decide([p4], { state: 'rejected', by: ANN, at: T0 + 22, reason: 'we do not', resultEntryId: null }),
    await p.edit(p1, { question: 'too late', answer: 'x', entryId: null }, T0 + 23),
  ];
  return {
    empty,
    ids: [p1, p2, p3, p4, p5],
    found,
    edits,
    decisions,
    after: {
      pending: await p.list('pending', 10),
      approved: await p.list('approved', 10),
      rejected: await p.list('rejected', 1),
      count: await p.pendingCount(),
      p1: await p.get(p1),
      changes: await p.pendingChanges(),
    },
  };
}

const SOURCES_SEED = `
  INSERT INTO clients (id, enabled, settings, created_at, updated_at) VALUES ('shop', 1, '{}', 1, 1);
  INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at) VALUES ('v1', 'shop', 'im', 'u9', 1, 1), ('v2', 'shop', 'im', 'u2', 1, 1);
  INSERT INTO messages (id, conversation_id, client_id, event_type, msg_id, role, from_user_id, content, message_info, received_at) VALUES
    (1, 'v1', 'shop', 'auto_dialog', 'm1', 'customer', 'u9', 'How do I get a refund?', '{}', 10),
    (2, 'v1', 'shop', 'auto_dialog', 'm2', 'customer', 'u1', '还有别的吗', '{}', 11),
    (3, 'v1', 'shop', 'auto_dialog', 'm3', 'staff', NULL, 'Within 7 days', '{}', 12),
    (4, 'v1', 'shop', 'auto_dialog', 'm4', 'customer', 'u9', NULL, '{}', 13),
    (5, 'v2', 'shop', 'auto_dialog', 'm5', 'customer', 'u2', 'hi', '{}', 14);
  INSERT INTO replies (id, conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, created_at, cause, operator) VALUES
    (1, 'v1', 'auto', 'r1', '["m1"]', 1, '', 1, 'kb', 20, NULL, NULL),
    (2, 'v1', 'suggestion', 'r2', '[]', 2, 'maybe', 0, 'kb', 21, NULL, NULL),
    (3, 'v1', 'website', 'r3', '["m2", 5]', 2, 'an answer', 0, 'kb', 22, NULL, NULL),
    (4, 'v1', 'operator', 'r4', '{}', 3, 'Within 7 days', 0, 'operator', 23, NULL, '{"id":"a1","name":"Ann"}'),
    (5, 'v1', 'auto', 'r5', '[]', 3, '', 0, 'kb', 24, 'failed', NULL),
    (6, 'v2', 'auto', 'r6', '["m5"]', 5, 'hello', 0, 'kb', 25, NULL, NULL);`;

async function sourceScenario(s: StoreContract['proposalSources']) {
  return {
    lastReply: [await s.lastReply('v1', 'r4'), await s.lastReply('v1', 'r5'), await s.lastReply('v2', 'x'), await s.lastReply('none', 'x')],
    decision: [await s.botDecisionSince('v1', 1), await s.botDecisionSince('v2', 5), await s.botDecisionSince('v1', 4), await s.botDecisionSince('none', 0)],
    spokeAfter: [await s.spokeAfter('v1', 2), await s.spokeAfter('v1', 3), await s.spokeAfter('v1', 4), await s.spokeAfter('v2', 5)],
    customerMessages: [await s.customerMessages('v1', ['m4', 'm1', 'm3', 'zz']), await s.customerMessages('v1', []), await s.customerMessages('v2', ['m1'])],
    botReplies: [await s.botReplies('v1', ['r5', 'r1', 'r2', 'r3', 'r4']), await s.botReplies('v1', [])],
    customerIds: [await s.customerIds('v1'), await s.customerIds('v2'), await s.customerIds('none')],
  };
}

describe("the Learn queue's proposals and their sources on PostgreSQL and on SQLite", { skip: postgresSkipReason() }, () => {
  const stores = bothStores('propq');

  it('add, find, edit, decide and list proposals with the same results', async () => {
    const sqlite = await proposalScenario(stores.sqlite().proposals);
    const { pools } = await stores.postgres();
    const postgres = await proposalScenario(pgProposalQueries(pools[0]!));
    assert.deepEqual(postgres, sqlite);
    const [p1, p2, p3, p4, p5] = sqlite.ids as [number, number, number, number, number];
    assert.deepEqual(sqlite.empty, { list: [], count: 0, unknown: undefined, duplicate: null, changes: { entries: [], phrasings: [] }, decideNone: 0 });
    assert.deepEqual(sqlite.found.duplicate, p1);
    assert.equal(sqlite.found.other, null);
    assert.deepEqual(sqlite.found.changes.phrasings, [{ entryId: 3, text: 'refund pls' }, { entryId: 7, text: '怎么退款' }]);
    assert.deepEqual(sqlite.edits, [true, true, false]);
    assert.deepEqual(sqlite.decisions, [2, 0, 1, false], 'a decided proposal stays as it was');
    assert.deepEqual(sqlite.after.pending.map((p) => [p.id, p.kind, p.entryId]), [[p5, 'entry', null], [p3, 'phrasing', 9]]);
    assert.deepEqual(sqlite.after.approved.map((p) => p.id), [p2, p1]);
    assert.deepEqual(sqlite.after.rejected.map((p) => [p.id, p.reason]), [[p4, 'we do not']]);
    assert.equal(sqlite.after.count, 2);
    assert.deepEqual(sqlite.after.p1, {
      id: p1, kind: 'entry', state: 'approved', source: 'handoff', question: 'How do I get a refund?', answer: 'Within 7 days.', entryId: null, conversationId: 'v1',
      messageIds: ['m1', 'm2'], operator: ANN, createdAt: T0, updatedAt: T0, decidedBy: BO, decidedAt: T0 + 20, reason: null, resultEntryId: 5,
    });
    assert.deepEqual(sqlite.after.changes, { entries: [{ question: 'Refund please?', answer: 'Within 7 days.', phrasings: [] }], phrasings: [{ entryId: 9, text: '如何退款' }] });
  });

  it('read what a proposal is made from with the same results', async () => {
    const store = stores.sqlite();
    await seed(store, SOURCES_SEED);
    const sqlite = await sourceScenario(store.proposalSources);
    const { pools } = await stores.postgres();
    await seed(pools[0]!, SOURCES_SEED);
    const postgres = await sourceScenario(pgProposalSourceQueries(pools[0]!));
    assert.deepEqual(postgres, sqlite);
    assert.deepEqual(sqlite.lastReply.map((r) => r && [r.msgId, r.kind, r.replyTo, r.handoff, r.cause]), [['r5', 'auto', [], false, 'failed'], ['r4', 'operator', [], false, null], ['r6', 'auto', ['m5'], false, null], null]);
    assert.deepEqual(sqlite.decision, ['handoff', 'answered', null, null]);
    assert.deepEqual(sqlite.spokeAfter, [true, true, false, false]);
    assert.deepEqual(sqlite.customerMessages, [[{ msgId: 'm1', content: 'How do I get a refund?', fromUserId: 'u9' }, { msgId: 'm4', content: null, fromUserId: 'u9' }], [], []]);
    assert.deepEqual(sqlite.botReplies, [[{ msgId: 'r1', answered: false }, { msgId: 'r3', answered: true }, { msgId: 'r5', answered: false }], []]);
    assert.deepEqual(sqlite.customerIds, [['u9', 'u1'], ['u2'], []]);
  });

  it('of two nodes deciding the same proposal at once, exactly one counts it', async () => {
    const { pools } = await stores.postgres(2);
    const [a, b] = [pgProposalQueries(pools[0]!), pgProposalQueries(pools[1]!)];
    const base = { kind: 'entry' as const, source: 'agent' as const, answer: 'a', entryId: null, conversationId: null, messageIds: [], operator: null, now: T0 };
    const id = await a.add({ ...base, question: 'q' });
    const held = await holdTransaction(pools[0]!, async (tx) => assert.equal(await pgProposalQueries(tx).decide([id], { state: 'approved', by: ANN, at: T0 + 1, reason: null, resultEntryId: 1 }), 1));
    const other = b.decide([id], { state: 'rejected', by: BO, at: T0 + 2, reason: 'no', resultEntryId: null });
    await waitForLockWait(pools[0]!);
    await held.commit();
    assert.equal(await other, 0);
    assert.deepEqual([(await b.get(id))?.state, (await b.get(id))?.decidedBy], ['approved', ANN]);

    // Many rounds, each node in a transaction of its own, the ids in opposite orders: one winner per proposal, no deadlock.
    for (let round = 0; round < 10; round++) {
      const x = await a.add({ ...base, question: `x${round}` });
      const y = await a.add({ ...base, question: `y${round}` });
      const decide = (pool: (typeof pools)[number], ids: number[], by: typeof ANN) =>
        inPgTransaction(pool, async (tx) => pgProposalQueries(tx).decide(ids, { state: 'approved', by, at: T0, reason: null, resultEntryId: null }));
      const [n1, n2] = await Promise.all([decide(pools[0]!, [x, y], ANN), decide(pools[1]!, [y, x], BO)]);
      assert.equal(n1 + n2, 2, `round ${round}: each proposal decided once`);
    }
  });
});
