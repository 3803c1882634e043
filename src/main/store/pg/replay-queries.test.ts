import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type pg from 'pg';
import { postgresSkipReason } from '../../../../test/helpers/postgres.ts';
import type { StoreContract } from '../contract.ts';
import { staleRunError, type ReplayRowInput } from '../replay.ts';
import type { ReplayParams, ReplayRowSide, ReplayTotals } from '../../../shared/console-replay.ts';
import { bothStores, holdTransaction, seed, waitForLockWait } from './both-stores.fixture.ts';
import { pgReplayQueries } from './replay-queries.ts';

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5);
const PARAMS: ReplayParams = { from: T0, to: T0 + 1000, since: null, clientId: null, engine: 'gpt', threshold: 0.55, systemPrompt: '你好', withProposals: true, concurrency: 2, limit: 100, baseThreshold: 0.6 };
const side = (over: Partial<ReplayRowSide>): ReplayRowSide => ({ handoff: false, content: 'ok', score: null, engine: 'gpt', cause: null, llm: true, ms: 100, tokens: { prompt: 10, completion: 3 }, ...over });
const sideTotals = { answered: 1, handoff: 1, llmCalls: 2, callsWithUsage: 1, promptTokens: 10, completionTokens: 3, llmMs: 250.5 };
const TOTALS: ReplayTotals = { questions: 2, before: sideTotals, after: sideTotals, changed: { now_answered: 1, now_handoff: 0, other_answer: 0 }, elapsedMs: 1234.25 };

const row = (messageId: number, change: ReplayRowInput['change'], before: ReplayRowSide, after: ReplayRowSide): ReplayRowInput => ({
  messageId, conversationId: 'v1', clientId: 'shop', eventType: 'auto_dialog', question: `问题 ${messageId}`, askedAt: T0 + messageId, before, after, change,
});

// Message times not in id order (a clock stepped back): the binary search must land where SQLite's does.
const SEED = `
  INSERT INTO clients (id, enabled, settings, created_at, updated_at) VALUES ('shop', 1, '{}', 1, 1), ('other', 1, '{}', 1, 1);
  INSERT INTO conversations (id, client_id, channel, peer, group_id, created_at, last_message_at) VALUES ('v1', 'shop', 'im', 'u1', NULL, 1, 1), ('g1', 'shop', 'im', 'g', 'grp', 1, 1), ('w1', 'other', 'web', 'w', NULL, 1, 1);
  INSERT INTO messages (id, conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at, reply_scheduled) VALUES
    (1, 'v1', 'shop', 'auto_dialog', 'm1', 'customer', 'too early', '{}', ${T0 - 5}, 1),
    (2, 'v1', 'shop', 'auto_dialog', 'm2', 'customer', 'scheduled', '{}', ${T0 + 1}, 1),
    (3, 'v1', 'shop', 'auto_dialog', 'm3', 'customer', 'not scheduled', '{}', ${T0 + 2}, NULL),
    (4, 'g1', 'shop', 'auto_dialog', 'm4', 'customer', '有人吗', '{}', ${T0 + 3}, 0),
    (5, 'w1', 'other', 'website_dialog', 'm5', 'customer', 'web question', '{}', ${T0 + 4}, NULL),
    (6, 'v1', 'shop', 'auto_dialog', 'm6', 'customer', '   ', '{}', ${T0 + 5}, 1),
    (7, 'v1', 'shop', 'auto_dialog', 'm7', 'staff', 'staff line', '{}', ${T0 + 6}, 1),
    (8, 'v1', 'shop', 'cmd_dialog', 'm8', 'customer', 'a command', '{}', ${T0 + 7}, 1),
    (9, 'v1', 'shop', 'auto_dialog', 'm9', 'customer', 'clock went back', '{}', ${T0 - 100}, 1),
    (10, 'v1', 'shop', 'auto_dialog', 'm10', 'customer', 'too late', '{}', ${T0 + 1000}, 1);
  INSERT INTO replies (id, conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, created_at) VALUES
    (1, 'g1', 'suggestion', 'r1', '[]', 4, 'maybe', 0, 'kb', 1);`;

async function replayScenario(r: StoreContract['replay']) {
  const questions = {
    window: await r.questions({ from: T0, to: T0 + 1000, clientId: null, limit: 100 }),
    client: (await r.questions({ from: T0, to: T0 + 1000, clientId: 'other', limit: 100 })).map((q) => q.messageId),
    limited: (await r.questions({ from: T0, to: T0 + 1000, clientId: null, limit: 1 })).map((q) => q.messageId),
    from0: (await r.questions({ from: 0, to: T0 + 2000, clientId: null, limit: 100 })).map((q) => q.messageId),
    empty: await r.questions({ from: T0 + 5000, to: T0 + 6000, clientId: null, limit: 100 }),
  };
  const empty = { runs: await r.runs(10), run: await r.run(1), latency: await r.measuredLatency('gpt'), interrupted: await r.interruptRunning(T0) };
  const done = await r.startRun(PARAMS, { id: 'a1', name: 'Ann' }, T0 + 10);
  const failed = await r.startRun({ ...PARAMS, engine: null }, null, T0 + 11);
  const left = await r.startRun(PARAMS, null, T0 + 12);
  const running = await r.run(done);
  await r.finishRun(done, 'done', T0 + 20, TOTALS, [
    row(5, 'same', side({ ms: 100 }), side({ ms: 200 })),
    row(2, 'now_answered', side({ handoff: true, llm: false, engine: 'kb', ms: 1, score: 0.4, tokens: null }), side({ ms: 300.5 })),
    row(4, 'other_answer', side({ engine: 'other', ms: 9999 }), side({ content: '新答案', ms: 50 })),
  ]);
  await r.finishRun(failed, 'failed', T0 + 21, null, [], 'engine unreachable');
  return {
    questions,
    empty,
    ids: [done, failed, left],
    running,
    interrupted: await r.interruptRunning(T0 + 30),
    again: await r.interruptRunning(T0 + 31),
    runs: await r.runs(10),
    latest: await r.runs(1),
    unknown: await r.run(999),
    rows: await r.rows(done, { changedOnly: false, limit: 10 }),
    changed: (await r.rows(done, { changedOnly: true, limit: 10 })).map((x) => x.messageId),
    limitedRows: (await r.rows(done, { changedOnly: false, limit: 1 })).map((x) => x.messageId),
    noRows: await r.rows(failed, { changedOnly: false, limit: 10 }),
    latency: [await r.measuredLatency('gpt'), await r.measuredLatency('kb'), await r.measuredLatency('other'), await r.measuredLatency('none')],
  };
}

const STALE = 60_000;
const claimOf = (nodeId: string) => ({ nodeId, total: 3, staleMs: STALE });

/**
 * A run owned by a node: claimed once in the installation, kept alive by its heartbeat, cancelled
 * through its row, finished only by its node, and failed only once its heartbeat is stale.
 */
async function ownedScenario(r: StoreContract['replay']) {
  const a = await r.claimRun(PARAMS, { id: 'a1', name: 'Ann' }, T0, claimOf('node-a'));
  const aId = 'runId' in a ? a.runId : 0;
  const refused = await r.claimRun(PARAMS, null, T0 + 1, claimOf('node-b'));
  const claimed = await r.run(aId);
  const beats = [await r.heartbeat(aId, 'node-a', T0 + 5000, 1, 3), await r.heartbeat(aId, 'node-b', T0 + 5000, 2, 3)];
  // Just within the time-out of its last heartbeat: alive, whoever asks.
  const notStale = [await r.failStale(T0 + 5000 + STALE, STALE), await r.claimRun(PARAMS, null, T0 + 5000 + STALE, claimOf('node-b'))];
  const cancels = [await r.requestCancel(aId, T0 + 6000), await r.requestCancel(aId, T0 + 7000)];
  const asked = { beat: await r.heartbeat(aId, 'node-a', T0 + 7500, 2, 3), owner: (await r.run(aId))?.owner };
  const finishes = [
    await r.finishRun(aId, 'cancelled', T0 + 8000, TOTALS, [row(2, 'same', side({}), side({}))], null, 'node-b'),
    await r.finishRun(aId, 'cancelled', T0 + 8000, TOTALS, [row(2, 'same', side({}), side({}))], null, 'node-a'),
  ];
  const ended = { run: await r.run(aId), rows: (await r.rows(aId, { changedOnly: false, limit: 10 })).length, cancel: await r.requestCancel(aId, T0 + 8001), beat: await r.heartbeat(aId, 'node-a', T0 + 8001, 3, 3) };

  // Node B's run, then B stops: its heartbeat ages past the time-out, and a claim fails it first.
  const b = await r.claimRun(PARAMS, null, T0 + 9000, claimOf('node-b'));
  const bId = 'runId' in b ? b.runId : 0;
  const atTimeOut = await r.claimRun(PARAMS, null, T0 + 9000 + STALE, claimOf('node-a'));
  const c = await r.claimRun(PARAMS, null, T0 + 9001 + STALE, claimOf('node-a'));
  const cId = 'runId' in c ? c.runId : 0;
  const lost = {
    run: await r.run(bId),
    // B comes back: its run is no longer its own, and its late outcome is not written.
    beat: await r.heartbeat(bId, 'node-b', T0 + 9002 + STALE, 3, 3),
    finish: await r.finishRun(bId, 'done', T0 + 9002 + STALE, TOTALS, [row(2, 'same', side({}), side({}))], null, 'node-b'),
    rows: (await r.rows(bId, { changedOnly: false, limit: 10 })).length,
  };
  await r.finishRun(cId, 'done', T0 + 100_000, TOTALS, [], null, 'node-a');

  // A run without an owner (an earlier version's): it counts from its start, and nobody can cancel it through the row.
  const legacy = await r.startRun(PARAMS, null, T0 + 200_000);
  const legacyRefuses = await r.claimRun(PARAMS, null, T0 + 200_001, claimOf('node-a'));
  const legacyCancel = await r.requestCancel(legacy, T0 + 200_002);
  const legacyFailed = await r.failStale(T0 + 200_001 + STALE, STALE);
  return {
    ids: [aId, bId, cId, legacy],
    a,
    refused,
    claimed,
    beats,
    notStale,
    cancels,
    asked,
    finishes,
    ended,
    atTimeOut,
    c,
    lost,
    legacy: { refuses: legacyRefuses, cancel: legacyCancel, failed: legacyFailed, run: await r.run(legacy) },
  };
}

describe('replay runs on PostgreSQL and on SQLite', { skip: postgresSkipReason(), timeout: 60_000 }, () => {
  const stores = bothStores('replayq');

  it('read the same past questions and keep the same runs, rows and latencies', async () => {
    const store = stores.sqlite();
    await seed(store, SEED);
    const sqlite = await replayScenario(store.replay);
    const { pools } = await stores.postgres();
    await seed(pools[0]!, SEED);
    const postgres = await replayScenario(pgReplayQueries(pools[0]!));
    assert.deepEqual(postgres, sqlite);
    const [done, failed, left] = sqlite.ids as [number, number, number];
    assert.deepEqual(sqlite.questions.window.map((q) => [q.messageId, q.eventType, q.assisted, q.channel, q.isGroup]), [
      [2, 'auto_dialog', false, 'im', false],
      [4, 'auto_dialog', true, 'im', true],
      [5, 'website_dialog', false, 'web', false],
    ]);
    assert.deepEqual(sqlite.questions.window[1], { messageId: 4, conversationId: 'g1', clientId: 'shop', eventType: 'auto_dialog', assisted: true, content: '有人吗', receivedAt: T0 + 3, channel: 'im', isGroup: true });
    assert.deepEqual([sqlite.questions.client, sqlite.questions.limited, sqlite.questions.empty], [[5], [2], []]);
    assert.deepEqual(sqlite.questions.from0, [1, 2, 4, 5, 9, 10]);
    assert.deepEqual(sqlite.empty, { runs: [], run: undefined, latency: null, interrupted: 0 });
    assert.deepEqual(sqlite.running, { id: done, createdAt: T0 + 10, finishedAt: null, status: 'running', startedBy: { id: 'a1', name: 'Ann' }, params: PARAMS, totals: null, error: null, owner: null });
    assert.deepEqual([sqlite.interrupted, sqlite.again], [1, 0]);
    assert.deepEqual(sqlite.runs.map((x) => [x.id, x.status, x.finishedAt, x.error, x.totals !== null, x.startedBy]), [
      [left, 'failed', T0 + 30, 'interrupted: the process running it stopped', false, null],
      [failed, 'failed', T0 + 21, 'engine unreachable', false, null],
      [done, 'done', T0 + 20, null, true, { id: 'a1', name: 'Ann' }],
    ]);
    assert.deepEqual(sqlite.runs[2]!.totals, TOTALS);
    assert.deepEqual(sqlite.latest.map((x) => x.id), [left]);
    assert.equal(sqlite.unknown, undefined);
    assert.deepEqual(sqlite.rows.map((x) => [x.messageId, x.change, x.question]), [[2, 'now_answered', '问题 2'], [4, 'other_answer', '问题 4'], [5, 'same', '问题 5']]);
    assert.deepEqual(sqlite.rows[0]!.before, side({ handoff: true, llm: false, engine: 'kb', ms: 1, score: 0.4, tokens: null }));
    assert.deepEqual([sqlite.changed, sqlite.limitedRows, sqlite.noRows], [[2, 4], [2], []]);
    assert.deepEqual(sqlite.latency, [(100 + 200 + 300.5 + 50) / 4, null, 9999, null]);
  });

  it('keep a run its node\'s: one claimed at a time, its heartbeat and progress, a cancel through the row, a stale one failed naming its node', async () => {
    const sqlite = await ownedScenario(stores.sqlite().replay);
    const { pools } = await stores.postgres();
    const postgres = await ownedScenario(pgReplayQueries(pools[0]!));
    assert.deepEqual(postgres, sqlite);
    const [a, b, c, legacy] = sqlite.ids as [number, number, number, number];
    assert.deepEqual([sqlite.a, sqlite.refused], [{ runId: a }, { running: a }]);
    assert.deepEqual(sqlite.claimed?.owner, { nodeId: 'node-a', heartbeatAt: T0, done: 0, total: 3, cancelRequestedAt: null });
    assert.deepEqual(sqlite.beats, [{ cancelRequested: false }, null], 'only the owner renews it');
    assert.deepEqual(sqlite.notStale, [0, { running: a }], 'a live run on another node is never failed');
    assert.deepEqual(sqlite.cancels, [true, true]);
    assert.deepEqual(sqlite.asked, { beat: { cancelRequested: true }, owner: { nodeId: 'node-a', heartbeatAt: T0 + 7500, done: 2, total: 3, cancelRequestedAt: T0 + 6000 } });
    assert.deepEqual(sqlite.finishes, [false, true], 'only the owner writes the outcome');
    assert.deepEqual([sqlite.ended.run?.status, sqlite.ended.rows, sqlite.ended.cancel, sqlite.ended.beat], ['cancelled', 1, false, null]);
    assert.deepEqual([sqlite.atTimeOut, sqlite.c], [{ running: b }, { runId: c }]);
    assert.deepEqual([sqlite.lost.run?.status, sqlite.lost.run?.finishedAt, sqlite.lost.run?.error], ['failed', T0 + 9001 + STALE, staleRunError('node-b', STALE)]);
    assert.equal(staleRunError('node-b', STALE), 'interrupted: the node running it stopped (node-b: no heartbeat for 60 s)');
    assert.deepEqual([sqlite.lost.beat, sqlite.lost.finish, sqlite.lost.rows], [null, false, 0]);
    assert.deepEqual([sqlite.legacy.refuses, sqlite.legacy.cancel, sqlite.legacy.failed], [{ running: legacy }, false, 1]);
    assert.deepEqual([sqlite.legacy.run?.status, sqlite.legacy.run?.error, sqlite.legacy.run?.owner], ['failed', staleRunError(null, STALE), null]);
  });

  it('lets one of two nodes claiming at the same moment run: the other waits on the first\'s insert, then is refused', async () => {
    const { pools } = await stores.postgres(2);
    const [nodeA, nodeB] = pools as [pg.Pool, pg.Pool];
    // Node A's claim is in, not committed: node B's claim must wait on it, not pass beside it.
    let a: Awaited<ReturnType<StoreContract['replay']['claimRun']>> | undefined;
    const held = await holdTransaction(nodeA, async (tx) => (a = await Promise.resolve(pgReplayQueries(tx).claimRun(PARAMS, null, T0, claimOf('node-a'))).catch(() => undefined)));
    const b = pgReplayQueries(nodeB).claimRun(PARAMS, null, T0, claimOf('node-b'));
    try {
      await waitForLockWait(nodeA);
    } finally {
      await held.commit();
    }
    assert.ok(a && 'runId' in a);
    assert.deepEqual(await b, { running: a.runId });

    // And many at once from both nodes, after the run ends: exactly one wins.
    await pgReplayQueries(nodeA).finishRun(a.runId, 'done', T0 + 1, null, [], null, 'node-a');
    const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => pgReplayQueries(i % 2 ? nodeB : nodeA).claimRun(PARAMS, null, T0 + 2, claimOf(`node-${i}`))));
    const won = claims.filter((x) => 'runId' in x);
    assert.equal(won.length, 1, JSON.stringify(claims));
    assert.ok(claims.every((x) => ('runId' in x ? x.runId : x.running) === (won[0] as { runId: number }).runId));
    assert.equal(Number((await nodeB.query("SELECT count(*) AS n FROM replay_runs WHERE status = 'running'")).rows[0].n), 1);
  });

  it('keeps a run whole or not at all: a row refused leaves it running with no rows', async () => {
    const { pools } = await stores.postgres();
    const r = pgReplayQueries(pools[0]!);
    const id = await r.startRun(PARAMS, null, T0);
    const bad = { ...row(3, 'same', side({}), side({})), change: 'sideways' } as unknown as ReplayRowInput;
    await assert.rejects(async () => r.finishRun(id, 'done', T0 + 1, TOTALS, [row(2, 'same', side({}), side({})), bad]), { code: '23514' });
    assert.equal((await r.run(id))?.status, 'running');
    assert.deepEqual(await r.rows(id, { changedOnly: false, limit: 10 }), []);
  });
});
