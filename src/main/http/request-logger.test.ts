import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequestLogger, type LogCommand } from './request-logger.ts';
import type { RequestLogEntry } from '../store/request-log.ts';

const entry = (over: Partial<RequestLogEntry> = {}): RequestLogEntry => ({
  at: 0,
  requestId: 'r',
  method: 'POST',
  path: '/custom-im/chat-messages',
  clientId: null,
  eventType: null,
  msgId: null,
  conversationId: null,
  status: 401,
  code: 'invalid_signature',
  latencyMs: 0.1,
  replayed: false,
  problem: '{}',
  remote: '10.0.0.1',
  ...over,
});

const SETTINGS = { enabled: true, windowSeconds: 60, rowsPerWindow: 3 };

/** Rows the commands would leave, with their counts, as the writer applies them. */
function apply(commands: LogCommand[]): Array<{ requestId: string; count: number; remote: string | null }> {
  const rows: Array<{ requestId: string; count: number; remote: string | null; aggKey?: string }> = [];
  for (const c of commands) {
    if (c.kind === 'request_log') rows.push({ requestId: c.entry.requestId, count: 1, remote: c.entry.remote, aggKey: c.aggKey });
    else {
      const row = rows.find((r) => r.aggKey === c.aggKey)!;
      row.count += c.count;
      if (c.close) delete row.aggKey;
    }
  }
  return rows.map(({ requestId, count, remote }) => ({ requestId, count, remote }));
}

test('accepted requests get a row each; refusals of one kind get a few rows, then one row that counts the rest', () => {
  const commands: LogCommand[] = [];
  const logger = createRequestLogger(SETTINGS, (c) => commands.push(c));
  for (let i = 0; i < 5; i++) assert.equal(logger.log(entry({ requestId: `ok${i}`, status: 200, code: null, problem: null }), true), true);
  const wrote = Array.from({ length: 100 }, (_, i) => logger.log(entry({ requestId: `bad${i}`, at: i }), false));
  assert.deepEqual(wrote.filter(Boolean).length, 4, 'three rows of their own and the counting row');
  logger.flush(100);
  logger.log(entry({ requestId: 'late', at: 200 }), false);
  logger.flush(300, true);
  const rows = apply(commands);
  assert.equal(rows.length, 9);
  assert.deepEqual(rows.slice(5).map((r) => [r.requestId, r.count]), [['bad0', 1], ['bad1', 1], ['bad2', 1], ['bad3', 98]]);
  assert.equal(rows.reduce((n, r) => n + r.count, 0), 106, 'every request is counted once');
  assert.equal(logger.size(), 0);
});

test('kinds are told apart by address (IPv6 by /64), by client once authenticated, by status and code', () => {
  const commands: LogCommand[] = [];
  const logger = createRequestLogger({ ...SETTINGS, rowsPerWindow: 1 }, (c) => commands.push(c));
  for (let i = 0; i < 10; i++) {
    logger.log(entry({ remote: `2001:db8:1:2::${i}` }), false);
    logger.log(entry({ remote: '10.0.0.2' }), false);
    logger.log(entry({ remote: '10.0.0.2', status: 400, code: 'invalid_json' }), false);
    logger.log(entry({ remote: `10.0.0.${10 + i}`, clientId: 'acme', status: 400, code: 'validation_failed' }), true);
  }
  logger.flush(0, true);
  const rows = apply(commands);
  assert.equal(rows.length, 8, 'two rows (one own, one counting) for each of four kinds');
  assert.deepEqual(rows.filter((r) => r.count > 1).map((r) => [r.remote, r.count]), [
    ['2001:db8:1:2::/64', 9],
    ['10.0.0.2', 9],
    ['10.0.0.2', 9],
    ['10.0.0.11', 9],
  ]);
});

test('a new window starts new rows; flush puts counts on rows as they come, and closes ended windows', () => {
  const commands: LogCommand[] = [];
  const logger = createRequestLogger({ ...SETTINGS, rowsPerWindow: 1 }, (c) => commands.push(c));
  for (let i = 0; i < 10; i++) logger.log(entry({ at: i * 1000 }), false);
  assert.equal(logger.flush(10_000)?.code, 'invalid_signature');
  assert.deepEqual(apply(commands).map((r) => r.count), [1, 9]);
  assert.equal(logger.flush(10_000), null, 'nothing new counted');
  for (let i = 0; i < 5; i++) logger.log(entry({ at: 30_000 + i }), false);
  logger.log(entry({ at: 60_000 }), false);
  assert.deepEqual(apply(commands).map((r) => r.count), [1, 14, 1], 'the minute from t=0 ended: a new own row');
  assert.equal(logger.flush(200_000), null);
  assert.equal(logger.size(), 0);
});

test('memory is bounded: past the cap the oldest window is closed with its count', () => {
  const commands: LogCommand[] = [];
  const logger = createRequestLogger({ ...SETTINGS, rowsPerWindow: 1 }, (c) => commands.push(c), 100);
  for (let i = 0; i < 1000; i++) for (let k = 0; k < 3; k++) logger.log(entry({ remote: `10.1.${i >> 8}.${i & 255}` }), false);
  assert.ok(logger.size() <= 100);
  logger.flush(0, true);
  assert.equal(apply(commands).reduce((n, r) => n + r.count, 0), 3000);
});

test('disabled: one row per request, as before', () => {
  const commands: LogCommand[] = [];
  const logger = createRequestLogger({ ...SETTINGS, enabled: false }, (c) => commands.push(c));
  for (let i = 0; i < 50; i++) logger.log(entry(), false);
  assert.equal(apply(commands).length, 50);
});
