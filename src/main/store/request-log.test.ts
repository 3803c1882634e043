import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from './db.ts';
import { createStore, type Store } from './index.ts';
import type { RequestLogEntry } from './request-log.ts';
import { createRequestLogger } from '../http/request-logger.ts';
import { executeWrite } from '../conversations/write-commands.ts';

function open(): Store {
  return createStore(openDatabase(join(mkdtempSync(join(tmpdir(), 'sb-request-log-')), 'r.db')));
}

let seq = 0;
const request = (over: Partial<RequestLogEntry> = {}): RequestLogEntry => ({
  at: 1_000,
  requestId: `q${++seq}`,
  method: 'POST',
  path: '/custom-im/chat-messages',
  clientId: 'acme',
  eventType: 'website_dialog',
  msgId: `m${seq}`,
  conversationId: null,
  status: 200,
  code: null,
  latencyMs: 1,
  replayed: false,
  problem: null,
  remote: '10.0.0.1',
  ...over,
});
const unsigned = (over: Partial<RequestLogEntry> = {}): RequestLogEntry =>
  request({ status: 401, code: 'invalid_signature', problem: '{"code":"invalid_signature"}', ...over });

/** The service's path: the HTTP server's report through the request logger, applied by the writer. */
function logger(store: Store) {
  const log = createRequestLogger({ enabled: false, windowSeconds: 60, rowsPerWindow: 5 }, (command) => executeWrite(store, command));
  return (entry: RequestLogEntry, authenticated: boolean): void => void log.log(entry, authenticated);
}

const tableCount = (store: Store, verified: 0 | 1): number =>
  (store.connection.prepare('SELECT count(*) AS n FROM request_log WHERE verified = ?').get(verified) as { n: number }).n;

test('a request refused before its signature was checked is unverified: the client it named is a claim, not its client', () => {
  const store = open();
  const log = logger(store);
  log(request({ requestId: 'signed' }), true);
  log(request({ requestId: 'signed-then-refused', status: 409, code: 'replayed_request' }), true);
  log(unsigned({ requestId: 'forged' }), false);
  log(unsigned({ requestId: 'no-client', clientId: null, status: 400, code: 'invalid_json' }), false);

  const rows = Object.fromEntries(store.requestLog.recent(10).map((r) => [r.requestId, [r.verified, r.clientId, r.claimedClientId]]));
  assert.deepEqual(rows, {
    signed: [true, 'acme', null],
    'signed-then-refused': [true, 'acme', null],
    forged: [false, null, 'acme'],
    'no-client': [false, null, null],
  });
  // acme's own log is what it sent; the claims only when asked, in time order with the rest.
  const ids = (withClaims: boolean) => store.requestLog.filtered({ onlyFailed: false, clientId: 'acme', withClaims, limit: 10 }).map((r) => r.requestId);
  assert.deepEqual(ids(false), ['signed-then-refused', 'signed']);
  assert.deepEqual(ids(true), ['forged', 'signed-then-refused', 'signed']);
  assert.deepEqual(store.requestLog.filtered({ onlyFailed: true, clientId: 'acme', withClaims: true, limit: 1 }).map((r) => r.requestId), ['forged']);
  assert.deepEqual(store.requestLog.rowCounts(), { verified: 2, unverified: 2 });
  store.close();
});

test("10,000 unsigned requests claiming acme: acme's verified rows all stay, in its filter and through pruning", () => {
  const store = open();
  const log = logger(store);
  store.transaction(() => {
    for (let i = 0; i < 50; i++) log(request({ requestId: `acme-${i}`, at: 1_000 + i }), true);
    // From many addresses, so no flood counting folds them: each is a row of its own.
    for (let i = 0; i < 10_000; i++) log(unsigned({ requestId: `forged-${i}`, at: 2_000 + i, remote: `10.1.${i >> 8}.${i & 255}` }), false);
  });
  const acme = () => store.requestLog.filtered({ onlyFailed: false, clientId: 'acme', limit: 50 });
  assert.equal(acme().length, 50, "before pruning, acme's filter is its own 50 rows, not the newest 50 claims");
  assert.ok(acme().every((r) => r.verified && r.status === 200));

  const limits = { before: 0, maxRows: 1000, maxUnverifiedRows: 1000, batch: 1000 };
  assert.equal(store.requestLog.needsPrune(limits), true);
  let pruned = 0;
  for (let n; (n = store.requestLog.prune(limits)) > 0; ) pruned += n;
  assert.equal(pruned, 9000, 'only unverified rows went');
  assert.equal(store.requestLog.needsPrune(limits), false);

  assert.deepEqual(acme().map((r) => r.requestId), Array.from({ length: 50 }, (_, i) => `acme-${49 - i}`), "acme's 50 verified rows are all there");
  const claims = store.requestLog.filtered({ onlyFailed: false, clientId: 'acme', withClaims: true, limit: 5000 }).filter((r) => !r.verified);
  assert.equal(claims.length, 1000);
  assert.deepEqual([claims.at(-1)!.requestId, claims[0]!.requestId], ['forged-9000', 'forged-9999'], 'the newest 1,000 claims stay');
  // The counts pruning reads (kept by triggers) agree with the table.
  assert.deepEqual(store.requestLog.rowCounts(), { verified: tableCount(store, 1), unverified: tableCount(store, 0) });
  store.close();
});

test('verified rows past their own limit go oldest first, leaving the unverified rows to theirs', () => {
  const store = open();
  const log = logger(store);
  store.transaction(() => {
    for (let i = 0; i < 300; i++) log(unsigned({ requestId: `forged-${i}`, at: 1_000 + i }), false);
    for (let i = 0; i < 1_500; i++) log(request({ requestId: `acme-${i}`, at: 2_000 + i }), true);
  });
  const limits = { before: 0, maxRows: 1000, maxUnverifiedRows: 1000, batch: 200 };
  assert.equal(store.requestLog.prune(limits), 200, 'one batch at a time');
  while (store.requestLog.prune(limits) > 0);
  assert.deepEqual(store.requestLog.rowCounts(), { verified: 1000, unverified: 300 });
  const verified = store.requestLog.filtered({ onlyFailed: false, clientId: 'acme', limit: 5000 });
  assert.equal(verified.at(-1)!.requestId, 'acme-500');
  // Rows past the retention go whatever their kind, and the counts follow.
  while (store.requestLog.prune({ ...limits, before: 2_100 }) > 0);
  assert.deepEqual(store.requestLog.rowCounts(), { verified: 1000, unverified: 0 });
  store.close();
});
