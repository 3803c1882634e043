import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from './db.ts';
import { createStore, type Store } from './index.ts';
import { rawStatsQueries } from './stats-raw.fixture.ts';
import { STATS_RETENTION_MINUTES } from './migrations/012-stats-rollup.ts';
import type { StatsSeries } from './stats.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';

const MINUTE = 60_000;
/** A minute boundary, as the console handler passes; the data spans the 30 hours before it. */
const NOW = 29_000_000 * MINUTE;

function open(): Store {
  return createStore(openDatabase(join(mkdtempSync(join(tmpdir(), 'sb-stats-')), 's.db')));
}

/** Deterministic pseudo-random numbers, so a failure can be rerun. */
function rng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

const STATUSES = [200, 200, 200, 201, 400, 401, 404, 413, 429, 500, 503];
const OUTCOMES = ['sent', 'retry', 'dead', 'cancelled'] as const;
const KINDS = ['auto', 'auto', 'website', 'suggestion', 'operator'] as const;

/** Rows of every kind the dashboard counts, through the store's own writers, spread over 30 hours. */
function writeVaried(store: Store, rows: number, seed = 1): void {
  const r = rng(seed);
  const at = (): number => NOW - Math.floor(r() * 30 * 60 * MINUTE);
  store.transaction(() => {
    store.clients.create('a', DEFAULT_CLIENT_SETTINGS, 0);
    store.conversations.create({ id: 'c', clientId: 'a', channel: 'im', peer: 'u:1', groupId: null, customerId: 'c', autoReply: 'active', now: 0 });
    const messageId = store.messages.insert({
      conversationId: 'c', clientId: 'a', eventType: 'auto_dialog', msgId: 'm', role: 'customer', fromUserId: 'u', fromUserType: 1,
      content: 'hi', messageInfo: '{}', createTimestamp: 0, receivedAt: 0, replyScheduled: true, replyReason: null,
    });
    for (let i = 0; i < rows; i++) {
      const status = STATUSES[Math.floor(r() * STATUSES.length)]!;
      const aggKey = status === 429 ? `k${i}` : null;
      store.requestLog.insert({
        at: at(), requestId: `q${i}`, method: 'POST', path: '/custom-im/chat-messages', clientId: 'a', eventType: 'auto_dialog', msgId: `m${i}`,
        conversationId: null, status, code: null, latencyMs: 1, replayed: false, problem: null, remote: '127.0.0.1', verified: true,
      }, aggKey);
      // Refusals counted on the row afterwards: the rollup must follow the UPDATE of count.
      if (aggKey) store.requestLog.addToAggregate(aggKey, 1 + Math.floor(r() * 40), NOW, r() < 0.5);

      const kind = KINDS[Math.floor(r() * KINDS.length)]!;
      const replyId = store.messages.insertReply({
        conversationId: 'c', kind, msgId: `r${i}`, replyTo: ['m'], afterMessageId: messageId, content: 'x', handoff: r() < 0.2, engine: 'kb',
        confidence: null, sources: [], operator: kind === 'operator' ? { id: 'o', name: 'O' } : null, createdAt: at(),
      });
      if (i % 2 === 0) {
        const deliveryId = store.deliveries.insert({
          replyId, replyMsgId: `r${i}`, conversationId: 'c', clientId: 'a', sendUrl: 'http://127.0.0.1:9/', messageInfo: '{}', state: 'pending', nextAttemptAt: 0, createdAt: 0,
        });
        for (let a = 1; a <= 3; a++) {
          const outcome = OUTCOMES[Math.floor(r() * OUTCOMES.length)]!;
          store.deliveries.recordAttempt({
            deliveryId, attempt: a, startedAt: at(), durationMs: 1, status: 500, error: null, outcome, state: 'pending', nextAttemptAt: 0, now: 0,
          });
        }
      }
    }
  });
}

const plain = (s: StatsSeries) => Object.fromEntries(Object.entries(s).map(([k, m]) => [k, [...m].sort((x, y) => x[0] - y[0])]));
const total = (s: StatsSeries) => Object.fromEntries(Object.entries(s).map(([k, m]) => [k, [...m.values()].reduce((a, b) => a + b, 0)]));
const WINDOWS = [5, 60, 24 * 60, 30 * 60 + 1].map((minutes) => NOW - (minutes - 1) * MINUTE);

test('the rollup gives the same series as counting the raw rows, for every window the dashboard asks', () => {
  const store = open();
  writeVaried(store, 3000);
  const raw = rawStatsQueries(store.connection);
  for (const since of WINDOWS) assert.deepEqual(plain(store.stats.series(since)), plain(raw(since)), `window from ${since}`);
  const all = total(store.stats.series(WINDOWS.at(-1)!));
  for (const [name, n] of Object.entries(all)) assert.ok(n > 100, `${name} has data (${n})`);
  assert.ok(all['requests']! > 3000, 'refusals counted on a row after it was written are included');
  store.close();
});

test('pruning the request log leaves the dashboard history; the rollup then counts more than the rows left', () => {
  const store = open();
  writeVaried(store, 2000, 7);
  const raw = rawStatsQueries(store.connection);
  const since = WINDOWS[2]!;
  const before = plain(store.stats.series(since));
  let pruned = 0;
  for (let n; (n = store.requestLog.prune({ before: NOW - 60 * MINUTE, maxRows: 500, maxUnverifiedRows: 500, batch: 100 })) > 0; ) pruned += n;
  assert.ok(pruned > 1000);
  assert.deepEqual(plain(store.stats.series(since)), before, 'the dashboard shows what happened, not what the log still holds');
  assert.ok(total(raw(since))['requests']! < total(store.stats.series(since))['requests']!);
  // New rows after a prune still count on top of the history.
  store.requestLog.insert({
    at: NOW, requestId: 'late', method: 'POST', path: '/x', clientId: null, eventType: null, msgId: null, conversationId: null,
    status: 401, code: null, latencyMs: 1, replayed: false, problem: null, remote: null, verified: false,
  });
  const after = store.stats.series(since);
  assert.equal(after.requests.get(NOW / MINUTE), (new Map(before['requests'] as Array<[number, number]>).get(NOW / MINUTE) ?? 0) + 1);
  assert.equal(after.rejected.get(NOW / MINUTE), (new Map(before['rejected'] as Array<[number, number]>).get(NOW / MINUTE) ?? 0) + 1);
  store.close();
});

test("the request log's maintenance trims the rollup to a week before its newest minute, in bounded batches", () => {
  const store = open();
  const log = (at: number, i: number): void => store.requestLog.insert({
    at, requestId: `q${i}`, method: 'POST', path: '/x', clientId: null, eventType: null, msgId: null, conversationId: null,
    status: 401, code: null, latencyMs: 1, replayed: false, problem: null, remote: null, verified: false,
  });
  // Limits under which the log itself has nothing to prune: only the rollup does.
  const limits = { before: 0, maxRows: 1_000_000, maxUnverifiedRows: 1_000_000 };
  store.transaction(() => {
    for (let i = 0; i < 120; i++) log(i * MINUTE, i);
  });
  const cells = (): number => (store.connection.prepare('SELECT count(*) AS n FROM stats_minutes').get() as { n: number }).n;
  assert.equal(cells(), 240, 'requests and rejected for each of 120 minutes');
  assert.equal(store.requestLog.needsPrune(limits), false);
  const later = (STATS_RETENTION_MINUTES + 100) * MINUTE;
  log(later, 1000);
  assert.equal(cells(), 242, 'writes never trim: that is left to maintenance');
  assert.equal(store.requestLog.needsPrune(limits), true);
  assert.equal(store.requestLog.prune({ ...limits, batch: 50 }), 50, 'one batch at a time');
  let n = 50;
  for (let k; (k = store.requestLog.prune({ ...limits, batch: 50 })) > 0; ) n += k;
  assert.equal(n, 200, 'the 100 minutes more than a week before the newest went');
  assert.equal(store.requestLog.needsPrune(limits), false);
  assert.equal(store.requestLog.recent(1000).length, 121, 'the log rows themselves stay (their own retention)');
  const kept = store.stats.series(0);
  assert.deepEqual([...kept.requests.keys()].sort((x, y) => x - y), [...Array.from({ length: 20 }, (_, i) => 100 + i), later / MINUTE]);
  // A late write from long ago trims nothing newer than itself, and is itself trimmed next time.
  log(0, 1001);
  assert.equal(store.requestLog.prune({ ...limits, batch: 50 }), 2);
  assert.deepEqual(store.stats.series(0).requests, kept.requests);
  store.close();
});

test('reading a window and trimming are primary-key ranges of the rollup, never a read of the raw tables', () => {
  const store = open();
  const plan = (sql: string): string => (store.connection.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
  const read = plan('SELECT minute, metric, n FROM stats_minutes WHERE minute >= ? AND n != 0');
  assert.match(read, /SEARCH stats_minutes USING PRIMARY KEY \(minute>\?\)/);
  const trim = plan('DELETE FROM stats_minutes WHERE (minute, metric) IN (SELECT minute, metric FROM stats_minutes WHERE minute < ? ORDER BY minute LIMIT ?)');
  assert.doesNotMatch(trim, /SCAN|TEMP B-TREE/, trim);
  assert.match(trim, /PRIMARY KEY/);
  store.close();
});
