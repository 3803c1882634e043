import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason } from '../../../test/helpers/postgres.ts';
import { workNodes } from '../../../test/helpers/pg-work-fixture.ts';
import { manualClock } from '../../shared/clock.ts';
import { startPgMaintenance } from './pg-maintenance.ts';

const DAY = 86_400_000;
const config = { requestLogRetentionDays: 30, requestLogMaxRows: 5, requestLogMaxUnverifiedRows: 3, idempotencyRetentionHours: 48 };

describe('retention on PostgreSQL', { skip: postgresSkipReason() }, () => {
  const nodes = workNodes('prune');

  it('cuts the request log by age and by size per kind, old minutes and old idempotency records, one node at a time', async () => {
    const [a, b] = await nodes(2);
    const clock = manualClock(Date.UTC(2026, 10, 29));
    const now = clock.now();
    const db = a!.pool;
    const log = (id: string, at: number, verified: number) =>
      db.query('INSERT INTO request_log (at, request_id, method, path, status, latency_ms, verified) VALUES ($1, $2, $3, $4, 200, 1, $5)', [at, id, 'POST', '/x', verified]);
    await log('old', now - 31 * DAY, 1);
    for (let i = 0; i < 7; i++) await log(`v${i}`, now - 1000 + i, 1);
    for (let i = 0; i < 5; i++) await log(`u${i}`, now - 1000 + i, 0);
    const idem = (msgId: string, at: number) =>
      db.query("INSERT INTO idempotency (client_id, event_type, msg_id, content_hash, status, response, conversation_id, signature, created_at) VALUES ('c1', 'auto_dialog', $1, 'h', 200, '{}', 'v', 's', $2)", [msgId, at]);
    await idem('stale', now - 49 * 3_600_000);
    await idem('kept', now - 47 * 3_600_000);
    const lines: string[] = [];
    // Both nodes start their pass at once: the lock lets one work, the other skips.
    const passes = [a!, b!].map((n) => startPgMaintenance({ pool: n.pool, clock, config, log: (l) => lines.push(l) }));
    await Promise.all(passes.map((p) => p.settled()));
    const ids = (await db.query('SELECT request_id FROM request_log ORDER BY id')).rows.map((r: { request_id: string }) => r.request_id);
    assert.deepEqual(ids, ['v2', 'v3', 'v4', 'v5', 'v6', 'u2', 'u3', 'u4'], 'the old row, then the oldest of each kind past its limit');
    const kinds = (await db.query('SELECT verified, n::int AS n FROM request_log_rows_all ORDER BY verified')).rows;
    assert.deepEqual(kinds, [{ verified: 0, n: 3 }, { verified: 1, n: 5 }], 'the counts follow');
    const left = (await db.query('SELECT msg_id FROM idempotency ORDER BY msg_id')).rows.map((r: { msg_id: string }) => r.msg_id);
    assert.deepEqual(left, ['kept']);
    assert.deepEqual(lines, []);

    // A minute later, on the clock: the next pass finds rows that aged out meanwhile.
    clock.advance(2 * DAY);
    await Promise.all(passes.map((p) => p.settled()));
    assert.equal((await db.query('SELECT count(*)::int AS n FROM idempotency')).rows[0].n, 0);
    await Promise.all(passes.map((p) => p.stop()));
    assert.equal((await db.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'")).rows[0].n, 0, 'the lock is let go');
  });
});
