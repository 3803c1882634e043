import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason } from '../../../../test/helpers/postgres.ts';
import type { LoggedRequest } from '../request-log.ts';
import { pgAuditQueries } from './audit-queries.ts';
import { pgRequestLogQueries } from './request-log-queries.ts';
import { pgStatsQueries } from './stats-queries.ts';
import { pgPeopleQueries, pgQuoteQueries, pgTraceQueries } from './trace-queries.ts';
import { storePairs } from './store-pair.fixture.ts';

const T = 1_800_000_000_000;
const req = (n: number, over: Partial<LoggedRequest> = {}): LoggedRequest => ({
  at: T + n * 1000, requestId: `req-${n}`, method: 'POST', path: '/v1/messages', clientId: 'shop', eventType: 'auto_dialog', msgId: `m${n}`,
  conversationId: null, status: 200, code: null, latencyMs: 1.5, replayed: false, problem: null, remote: '127.0.0.1', verified: true, ...over,
});

describe('the request log, dashboard, audit, trace, quotes and people on PostgreSQL give what SQLite gives', { skip: postgresSkipReason() }, () => {
  const pair = storePairs('logs');

  it('logs requests, counts refusals on one row, filters and prunes them, and counts the minutes', async () => {
    const p = await pair();
    const log = { sqlite: p.sqlite.requestLog, pg: pgRequestLogQueries(p.pg) };
    const stats = { sqlite: p.sqlite.stats, pg: pgStatsQueries(p.pg) };
    for (const s of ['sqlite', 'pg'] as const) {
      await log[s].insert(req(1));
      await log[s].insert(req(2, { status: 401, code: 'bad_signature', verified: false, clientId: 'shop', problem: '{"title":"no"}' }), 'agg-1');
      await log[s].addToAggregate('agg-1', 4, T + 90_000, true);
      await log[s].insert(req(3, { status: 422, replayed: true, requestId: 'req-1' }));
      await log[s].insert(req(4, { clientId: 'other', msgId: null }));
      await log[s].insert(req(200, { status: 500, latencyMs: 2.25 }));
    }
    const recent = await p.same('recent', (s) => log[s].recent(10));
    assert.deepEqual(recent.map((r) => r.id), [5, 4, 3, 2, 1]);
    assert.deepEqual([recent[3]!.count, recent[3]!.lastAt, recent[3]!.clientId, recent[3]!.claimedClientId, recent[3]!.verified], [5, T + 90_000, null, 'shop', false]);
    assert.deepEqual((await p.same('failed', (s) => log[s].recent(10, true))).map((r) => r.id), [5, 3, 2]);
    assert.deepEqual((await p.same('by request id', (s) => log[s].byRequestId('req-1'))).map((r) => r.id), [1, 3]);
    const filtered = async (f: Parameters<typeof log.pg.filtered>[0]) => (await p.same(JSON.stringify(f), (s) => log[s].filtered(f))).map((r) => r.id);
    assert.deepEqual(await filtered({ onlyFailed: false, limit: 3 }), [5, 4, 3]);
    assert.deepEqual(await filtered({ onlyFailed: false, clientId: 'shop', limit: 10 }), [5, 3, 1]);
    assert.deepEqual(await filtered({ onlyFailed: false, clientId: 'shop', withClaims: true, limit: 10 }), [5, 3, 2, 1]);
    assert.deepEqual(await filtered({ onlyFailed: true, clientId: 'shop', withClaims: true, limit: 2 }), [5, 3]);
    assert.deepEqual(await filtered({ onlyFailed: false, since: T + 60_000, limit: 10 }), [5, 2], 'the aggregate overlaps the range by its last request');
    assert.deepEqual(await filtered({ onlyFailed: false, until: T + 3000, msgId: 'm3', requestId: 'req-1', limit: 10 }), [3]);
    assert.deepEqual(await filtered({ onlyFailed: false, msgId: 'nope', limit: 10 }), []);
    assert.deepEqual(await p.same('row counts', (s) => log[s].rowCounts()), { verified: 4, unverified: 1 });
    const series = await p.same('series', (s) => stats[s].series(T));
    assert.deepEqual([...series.requests], [[T / 60_000, 8], [T / 60_000 + 3, 1]]);
    assert.deepEqual([...series.rejected], [[T / 60_000, 6], [T / 60_000 + 3, 1]]);
    assert.equal((await p.same('series later', (s) => stats[s].series(T + 120_000))).requests.size, 1);
    assert.equal(await p.same('needs human', (s) => stats[s].needsHuman()), 0);
    const limits = { before: T + 2500, maxRows: 2, maxUnverifiedRows: 5 };
    assert.equal(await p.same('needs prune', (s) => log[s].needsPrune(limits)), true);
    assert.equal(await p.same('prune', (s) => log[s].prune({ ...limits, batch: 10 })), 3);
    assert.deepEqual(await p.same('after prune', (s) => log[s].rowCounts()), { verified: 2, unverified: 0 });
    assert.equal(await p.same('pruned', (s) => log[s].needsPrune(limits)), false);
    assert.deepEqual((await p.same('kept', (s) => log[s].recent(10))).map((r) => r.id), [5, 4]);
    assert.equal((await p.same('counts stay', (s) => stats[s].series(T))).requests.get(T / 60_000), 8, 'pruning keeps the counts');
  });

  it('audits with and without an operator, and searches by conversation, operator and action, newest first', async () => {
    const p = await pair();
    const audit = { sqlite: p.sqlite.audit, pg: pgAuditQueries(p.pg) };
    for (const s of ['sqlite', 'pg'] as const) {
      await audit[s].insert({ at: 1, operator: { id: 'a1', name: 'Ann', address: '10.0.0.1' }, action: 'reply', conversationId: 'cv_1', detail: '你好' });
      await audit[s].insert({ at: 2, operator: null, action: 'retry', conversationId: null, detail: null });
      await audit[s].insert({ at: 3, operator: { id: 'a2', name: 'Bob' }, action: 'reply', conversationId: 'cv_2', detail: 'x', address: '::1' });
    }
    const all = await p.same('list', (s) => audit[s].list(undefined, 10));
    assert.deepEqual(all.map((a) => [a.id, a.operator.name, a.address]), [[3, 'Bob', '::1'], [2, '(no operator set)', null], [1, 'Ann', '10.0.0.1']]);
    assert.deepEqual((await p.same('list one', (s) => audit[s].list('cv_1', 10))).map((a) => a.id), [1]);
    assert.deepEqual((await p.same('search', (s) => audit[s].search({ action: 'reply', operatorId: 'a2', limit: 10 }))).map((a) => a.id), [3]);
    assert.deepEqual((await p.same('search limit', (s) => audit[s].search({ action: 'reply', limit: 1 }))).map((a) => a.id), [3]);
    assert.deepEqual(await p.same('search none', (s) => audit[s].search({ conversationId: 'nope', limit: 5 })), []);
  });

  it("traces a message to its reply and delivery attempts, looks up quotes, and remembers people's names", async () => {
    const p = await pair();
    await p.seed(`
      INSERT INTO clients (id, created_at, updated_at) VALUES ('shop', 1, 1);
      INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at) VALUES ('cv_1', 'shop', 'im', 'u1', 1, 1);
      INSERT INTO messages (id, conversation_id, client_id, event_type, msg_id, role, from_user_id, content, message_info, received_at, reply_scheduled, reply_reason, reply_outcome, reply_msg_id, reply_note, shown) VALUES
        (1, 'cv_1', 'shop', 'auto_dialog', 'm1', 'customer', 'u1', 'hi', '{"nickname":"Lee"}', 1, 1, 'scheduled', 'answered', 'r1', NULL, NULL),
        (2, 'cv_1', 'shop', 'auto_dialog', 'm2', 'customer', 'u2', NULL, '{}', 2, 0, 'not_mentioned', NULL, NULL, 'group', NULL),
        (3, 'cv_1', 'shop', 'auto_dialog', 'm3', 'customer', 'u3', 'plain', '{}', 3, NULL, NULL, NULL, NULL, NULL, NULL);
      INSERT INTO replies (id, conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, confidence, sources, created_at, operator) VALUES
        (1, 'cv_1', 'auto', 'r1', '["m1"]', 1, 'hello', 0, 'kb', 0.75, '[{"id":3,"score":0.75}]', 2, NULL),
        (2, 'cv_1', 'operator', 'r2', '[]', 1, 'from Ann', 0, 'operator', NULL, '[]', 2, '{"id":"a1","name":"Ann"}');
      INSERT INTO deliveries (id, reply_id, reply_msg_id, conversation_id, client_id, send_url, message_info, state, attempts, next_attempt_at, created_at, updated_at) VALUES
        (1, 1, 'r1', 'cv_1', 'shop', 'http://a/hook', '{}', 'dead', 1, 0, 2, 2), (2, 1, 'r1', 'cv_1', 'shop', 'http://b/hook', '{}', 'sent', 1, 0, 3, 3);
      INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status, error, outcome) VALUES (2, 1, 5, 12.5, 200, NULL, 'sent');`);
    const attempts = async (id: number) =>
      (await p.pg.query('SELECT attempt, started_at, duration_ms, status, error, outcome FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt', [id])).rows.map((r) => ({
        attempt: r.attempt, startedAt: Number(r.started_at), durationMs: r.duration_ms, status: r.status, error: r.error, outcome: r.outcome,
      }));
    const trace = { sqlite: p.sqlite.trace, pg: pgTraceQueries(p.pg, attempts) };
    const t1 = await p.same('trace', (s) => trace[s].forMessage(1));
    assert.deepEqual(t1?.delivery, { id: 2, state: 'sent', sendUrl: 'http://b/hook', attempts: [{ attempt: 1, startedAt: 5, durationMs: 12.5, status: 200, error: null, outcome: 'sent' }] });
    assert.deepEqual(t1?.reply?.sources, [{ id: 3, score: 0.75 }]);
    assert.deepEqual(await p.same('no reply', (s) => trace[s].forMessage(2)), { msgId: 'm2', decision: { scheduled: false, reason: 'not_mentioned' }, outcome: null, note: 'group', reply: null, delivery: null });
    assert.equal((await p.same('undecided', (s) => trace[s].forMessage(3)))?.decision, null);
    assert.equal(await p.same('unknown', (s) => trace[s].forMessage(99)), undefined);

    const quotes = { sqlite: p.sqlite.quotes, pg: pgQuoteQueries(p.pg) };
    const q = await p.same('quotes', async (s) => [...(await quotes[s]('shop', ['m1', 'r2', 'r1', 'm1', 'nope']))]);
    assert.deepEqual(q.map(([id, line]) => [id, line.speakerName]), [['m1', 'Lee'], ['r2', 'Ann'], ['r1', null]], 'a line without `shown` is named from its message_info');

    const people = { sqlite: p.sqlite.people, pg: pgPeopleQueries(p.pg) };
    for (const s of ['sqlite', 'pg'] as const) {
      await people[s].remember('shop', 'u1', '李雷', 10);
      await people[s].remember('shop', 'u1', '李雷', 11);
      await people[s].remember('shop', 'u2', 'Omar', 12);
    }
    assert.deepEqual(await p.same('names', async (s) => [...(await people[s].names('shop', ['u1', 'u2', 'u9', 'u1']))].sort()), [['u1', '李雷'], ['u2', 'Omar']]);
    assert.deepEqual(await p.same('no names', async (s) => [...(await people[s].names('shop', []))]), []);
    const at = (await p.pg.query("SELECT updated_at FROM people WHERE user_id = 'u1'")).rows[0].updated_at;
    assert.equal(Number(at), 10, 'a repeat of the stored name writes nothing');
  });
});
