import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from '../migrate.ts';
import { MIGRATIONS } from './index.ts';

/** A store as version 21 left it: every row under the client it named, signed or not. */
function storeOfVersion21(): DatabaseSync {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 21);
  const insert = db.prepare(
    "INSERT INTO request_log (at, request_id, method, path, client_id, status, code, latency_ms, problem) VALUES (?, ?, 'POST', '/custom-im/chat-messages', ?, ?, ?, 1, ?)",
  );
  const row = (id: string, client: string | null, status: number, code: string | null, detail?: string): void =>
    void insert.run(Number(id.replace(/\D/g, '') || 0), id, client, status, code, code ? JSON.stringify({ code, detail: detail ?? '' }) : null);
  row('accepted', 'acme', 200, null);
  row('replayed', 'acme', 409, 'replayed_request');
  row('client-rate', 'acme', 429, 'rate_limited', 'client "acme" exceeds its request rate');
  row('schema', 'acme', 400, 'validation_failed', 'message_info failed validation');
  row('scenario', 'acme', 400, 'missing_sender', 'message_info.from_user_id is required when group_id is empty or absent');
  row('rule', 'acme', 400, 'validation_failed', 'message_info.content is required when files_info is empty or absent: send text or files');
  row('forged', 'acme', 401, 'invalid_signature');
  row('stale', 'acme', 401, 'timestamp_out_of_range');
  row('disabled', 'acme', 403, 'client_disabled');
  row('unknown', 'nobody', 401, 'unknown_client');
  row('envelope', 'acme', 400, 'validation_failed', 'the request body is missing required fields or has wrong types');
  row('jcs', 'acme', 400, 'validation_failed', 'message_info cannot be canonicalized (RFC 8785)');
  row('address-gate', null, 429, 'rate_limited', 'too many requests from this address failed authentication; retry in 3 s');
  row('internal', 'acme', 500, 'internal_error');
  row('bad-json', null, 400, 'invalid_json');
  insert.run(99, 'not-json-problem', 'acme', 400, 'validation_failed', '{not json');
  return db;
}

test('migration 22 marks the rows that passed the signature check; the rest keep the client they named as a claim', () => {
  const db = storeOfVersion21();
  assert.equal(migrate(db, MIGRATIONS, 22), 22);
  const rows = Object.fromEntries(
    db.prepare('SELECT request_id, verified, client_id, claimed_client FROM request_log').all().map((r) => [r['request_id'], [r['verified'], r['client_id'], r['claimed_client']]]),
  );
  const verified = [1, 'acme', null];
  const claimed = (client: string | null) => [0, null, client];
  assert.deepEqual(rows, {
    accepted: verified,
    replayed: verified,
    'client-rate': verified,
    schema: verified,
    scenario: verified,
    rule: verified,
    forged: claimed('acme'),
    stale: claimed('acme'),
    disabled: claimed('acme'),
    unknown: claimed('nobody'),
    envelope: claimed('acme'),
    jcs: claimed('acme'),
    'address-gate': claimed(null),
    // Answered before or after authentication alike: not proven, so not shown as acme's.
    internal: claimed('acme'),
    'bad-json': claimed(null),
    'not-json-problem': claimed('acme'),
  });
  const counts = Object.fromEntries(db.prepare('SELECT verified, n FROM request_log_rows').all().map((r) => [r['verified'], r['n']]));
  assert.deepEqual(counts, { 0: 10, 1: 6 });
});

test('migration 22: the row counts follow every insert, delete and change of kind; a new row is unverified unless marked', () => {
  const db = storeOfVersion21();
  migrate(db, MIGRATIONS, 22);
  const counts = () => Object.fromEntries(db.prepare('SELECT verified, n FROM request_log_rows').all().map((r) => [r['verified'], r['n']]));
  db.prepare("INSERT INTO request_log (at, request_id, method, path, status, latency_ms) VALUES (1, 'new', 'POST', '/', 401, 1)").run();
  db.prepare("INSERT INTO request_log (at, request_id, method, path, status, latency_ms, verified) VALUES (1, 'new-signed', 'POST', '/', 200, 1, 1)").run();
  assert.deepEqual(counts(), { 0: 11, 1: 7 });
  db.prepare("DELETE FROM request_log WHERE request_id IN ('forged', 'stale', 'accepted')").run();
  assert.deepEqual(counts(), { 0: 9, 1: 6 });
  db.prepare("UPDATE request_log SET verified = 1 WHERE request_id = 'new'").run();
  assert.deepEqual(counts(), { 0: 8, 1: 7 });
  assert.throws(() => db.prepare("UPDATE request_log SET verified = 2 WHERE request_id = 'new'").run(), /CHECK/);
  const plan = (sql: string) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join(' ');
  assert.match(plan('SELECT id FROM request_log WHERE verified = 0 ORDER BY id LIMIT 10'), /request_log_kind/);
  assert.match(plan("SELECT * FROM request_log WHERE claimed_client = 'acme' ORDER BY id DESC LIMIT 10"), /request_log_claimed/);
});
