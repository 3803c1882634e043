import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason } from '../../../../test/helpers/postgres.ts';
import type { StoreContract } from '../contract.ts';
import type { ReplayRowInput } from '../replay.ts';
import type { ReplayParams, ReplayRowSide, ReplayTotals } from '../../../shared/console-replay.ts';
import { bothStores, seed } from './both-stores.fixture.ts';
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

describe('replay runs on PostgreSQL and on SQLite', { skip: postgresSkipReason() }, () => {
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
    assert.deepEqual(sqlite.running, { id: done, createdAt: T0 + 10, finishedAt: null, status: 'running', startedBy: { id: 'a1', name: 'Ann' }, params: PARAMS, totals: null, error: null });
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
