// node bench/stats.ts [rows in the last hour]: dashboard stats before (GROUP BY over raw rows)
// and after issue 12 (per-minute rollup kept by triggers, migration 012), same run, same store;
// then what the triggers add to each write, on two fresh stores, one with its stats triggers dropped.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/main/store/db.ts';
import { createStore, type Store } from '../src/main/store/index.ts';
import { backfill } from '../src/main/store/migrations/012-stats-rollup.ts';
import { rawStatsQueries } from '../src/main/store/stats-raw.fixture.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../src/shared/client-settings.ts';
import { medianMs } from './lib.ts';

const ROWS = Number(process.argv[2] ?? process.env['BENCH_ROWS'] ?? 500_000);
const MINUTE = 60_000;
const NOW = Math.floor(Date.now() / MINUTE) * MINUTE;
const dir = mkdtempSync(join(tmpdir(), 'sb-stats-bench-'));

function open(name: string): Store {
  const store = createStore(openDatabase(join(dir, name)));
  store.transaction(() => {
    store.clients.create('a', DEFAULT_CLIENT_SETTINGS, 0);
    store.conversations.create({ id: 'c', clientId: 'a', channel: 'im', peer: 'u:1', groupId: null, customerId: 'c', autoReply: 'active', now: 0 });
    store.messages.insert({
      conversationId: 'c', clientId: 'a', eventType: 'auto_dialog', msgId: 'm', role: 'customer', fromUserId: 'u', fromUserType: 1,
      content: 'hi', messageInfo: '{}', createTimestamp: 0, receivedAt: 0, replyScheduled: true, replyReason: null,
    });
  });
  return store;
}

let seq = 0;
const logRow = (store: Store, at: number, status: number): void =>
  store.requestLog.insert({
    at, requestId: `q${++seq}`, method: 'POST', path: '/custom-im/chat-messages', clientId: 'a', eventType: 'website_dialog', msgId: `m${seq}`,
    conversationId: 'c', status, code: null, latencyMs: 1, replayed: false, problem: null, remote: '127.0.0.1', verified: true,
  });
const replyRow = (store: Store, at: number, handoff: boolean): number =>
  store.messages.insertReply({
    conversationId: 'c', kind: 'auto', msgId: `r${++seq}`, replyTo: ['m'], afterMessageId: 1, content: 'thanks, we are on it', handoff, engine: 'kb',
    confidence: 0.9, sources: [], createdAt: at,
  });
const delivery = (store: Store, replyId: number): number =>
  store.deliveries.insert({ replyId, replyMsgId: `d${++seq}`, conversationId: 'c', clientId: 'a', sendUrl: 'http://127.0.0.1:9/', messageInfo: '{}', state: 'pending', nextAttemptAt: 0, createdAt: 0 });
const attemptRow = (store: Store, deliveryId: number, attempt: number, at: number): void => {
  store.deliveries.recordAttempt({ deliveryId, attempt, startedAt: at, durationMs: 1, status: 500, error: 'HTTP 500', outcome: 'retry', state: 'pending', nextAttemptAt: 0, now: at });
};

/** `n` requests, replies and a fifth as many failed attempts, evenly over [from, to). */
function fill(store: Store, n: number, from: number, to: number): void {
  const step = (to - from) / n;
  for (let done = 0; done < n; done += 10_000) {
    store.transaction(() => {
      let d = 0;
      for (let i = done; i < Math.min(n, done + 10_000); i++) {
        const at = Math.floor(from + i * step);
        logRow(store, at, i % 10 === 0 ? 401 : 200);
        const replyId = replyRow(store, at, i % 20 === 0);
        if (i % 5 === 0) {
          if (d === 0) d = delivery(store, replyId);
          attemptRow(store, d, 1, at);
          d = 0;
        }
      }
    });
  }
}


// Read cost: one store, raw rows and rollup side by side.
const big = open('big.db');
const t0 = performance.now();
fill(big, ROWS, NOW - 24 * 60 * MINUTE, NOW - 60 * MINUTE);
fill(big, ROWS, NOW - 59 * MINUTE, NOW + MINUTE);
big.connection.exec('ANALYZE');
const buildS = (performance.now() - t0) / 1000;
const raw = rawStatsQueries(big.connection);
const reads: string[] = [];
for (const minutes of [60, 24 * 60]) {
  const since = NOW - (minutes - 1) * MINUTE;
  const before = medianMs(() => raw(since));
  const after = medianMs(() => big.stats.series(since));
  const same = JSON.stringify(Object.values(raw(since)).map((m) => [...m].sort())) === JSON.stringify(Object.values(big.stats.series(since)).map((m) => [...m].sort()));
  reads.push(`| stats, ${minutes === 60 ? '60-minute' : '24-hour'} window | ${before.toFixed(1)} ms | ${after.toFixed(2)} ms | ${(before / after).toFixed(0)}× | ${same ? 'identical' : 'DIFFERENT'} |`);
}
// The one-off cost of migration 012 on this store: the rollup rebuilt from the raw rows.
const kept = JSON.stringify(Object.values(big.stats.series(0)).map((m) => [...m].sort()));
big.connection.exec('BEGIN; DELETE FROM stats_minutes');
const b0 = performance.now();
backfill(big.connection);
const backfillMs = performance.now() - b0;
big.connection.exec('COMMIT');
const rebuilt = JSON.stringify(Object.values(big.stats.series(0)).map((m) => [...m].sort())) === kept;
reads.push(`| migration 012 backfill (once, at upgrade) | | ${backfillMs.toFixed(0)} ms | | ${rebuilt ? 'identical' : 'DIFFERENT'} |`);
big.close();

// Write cost: the statements of 500-row transactions, alternating between a store with the
// triggers and one without, median per row over the rounds.
const withT = open('with.db');
const without = open('without.db');
for (const { name } of without.connection.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'stats\\_%' ESCAPE '\\'").all() as Array<{ name: string }>) {
  without.connection.exec(`DROP TRIGGER ${name}`);
}
const BATCH = 500;
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 15);
const kinds = {
  'request_log insert (1 in 10 refused)': (s: Store, at: number, i: number) => logRow(s, at, i % 10 === 0 ? 401 : 200),
  'request_log count + 1 (refusals counted on a row)': (s: Store, at: number, i: number) => {
    if (i === 0) s.requestLog.insert({ at, requestId: 'agg', method: 'POST', path: '/', clientId: null, eventType: null, msgId: null, conversationId: null, status: 429, code: null, latencyMs: 1, replayed: false, problem: null, remote: null, verified: false }, `k${++seq}`);
    s.requestLog.addToAggregate(`k${seq}`, 1, at, false);
  },
  'reply insert': (s: Store, at: number, i: number) => void replyRow(s, at, i % 20 === 0),
  'delivery attempt insert (failed)': (s: Store, at: number) => attemptRow(s, delivery(s, replyRow(s, 0, false)), 1, at),
};
const writes: string[] = [];
for (const [label, write] of Object.entries(kinds)) {
  const per = { with: [] as number[], without: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    const order = [['with', withT], ['without', without]] as const;
    for (const [key, s] of r % 2 ? [...order].reverse() : order) {
      // The statements only: the triggers are CPU inside them; the commit (one more dirty page
      // per transaction) would add only the fsync noise of a shared disk.
      s.connection.exec('BEGIN IMMEDIATE');
      const start = performance.now();
      for (let i = 0; i < BATCH; i++) write(s, NOW + r * MINUTE + i * 100, i);
      per[key].push(((performance.now() - start) * 1000) / BATCH);
      s.connection.exec('COMMIT');
    }
  }
  const m = (a: number[]) => a.sort((x, y) => x - y)[a.length >> 1]!;
  const a = m(per.without);
  const b = m(per.with);
  // The fastest round is the one least disturbed by other work on a shared machine.
  const best = per.with[0]! - per.without[0]!;
  writes.push(`| ${label} | ${a.toFixed(1)} µs | ${b.toFixed(1)} µs | ${(b - a).toFixed(1)} µs (${(((b - a) / a) * 100).toFixed(0)}%) | ${per.without[0]!.toFixed(1)} → ${per.with[0]!.toFixed(1)} µs (${best.toFixed(1)}) |`);
}
withT.close();
without.close();
rmSync(dir, { recursive: true, force: true });

console.log(`store: ${ROWS.toLocaleString('en')} requests and replies in the last hour and as many over the 23 before, a fifth as many failed attempts; built in ${buildS.toFixed(0)} s\n`);
console.log('| read | before (raw GROUP BY) | after (rollup) | speed-up | series |\n|---|---|---|---|---|');
console.log(reads.join('\n'));
console.log(`\n| write, per row (in ${BATCH}-row transactions) | without triggers (median) | with triggers (median) | added (median) | fastest rounds, without → with (added) |\n|---|---|---|---|---|`);
console.log(writes.join('\n'));
