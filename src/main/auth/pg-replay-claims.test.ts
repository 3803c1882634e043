import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason } from '../../../test/helpers/postgres.ts';
import { workNodes } from '../../../test/helpers/pg-work-fixture.ts';
import { claimSignature, pruneSignatures } from './pg-replay-claims.ts';

const WINDOW = 600_000;
const T0 = 1_800_000_000_000;

describe('replay protection shared by PostgreSQL nodes', { skip: postgresSkipReason() }, () => {
  const nodes = workNodes('replay');

  it('makes a copy on node B wait for node A\'s transaction: refused when A commits, let through when A rolls back', async () => {
    const [a, b] = await nodes(2);
    const txA = await a!.pool.connect();
    const txB = await b!.pool.connect();
    try {
      await txA.query('BEGIN');
      assert.equal(await claimSignature(txA, 'c1', 'sig-1', T0, WINDOW), true);
      await txB.query('BEGIN');
      const onB = claimSignature(txB, 'c1', 'sig-1', T0 + 1, WINDOW);
      await txA.query('ROLLBACK'); // A's request failed (a 503, a refusal): no row stays
      assert.equal(await onB, true, 'an honest retry of a request that was not stored is no replay');
      await txB.query('COMMIT');

      await txA.query('BEGIN');
      const again = claimSignature(txA, 'c1', 'sig-1', T0 + 2, WINDOW);
      assert.equal(await again, false, 'accepted on B');
      await txA.query('ROLLBACK');
      assert.equal(await claimSignature(a!.pool, 'c2', 'sig-1', T0 + 2, WINDOW), true, 'another client may sign the same bytes');
      assert.equal(await claimSignature(a!.pool, 'c1', 'sig-1', T0 + 1 + WINDOW, WINDOW), true, 'past the window the signature is taken afresh');
    } finally {
      txA.release();
      txB.release();
    }
  });

  it('lets exactly one of many nodes racing on one signature through', async () => {
    const pools = await nodes(4);
    const results = await Promise.all(pools.flatMap((n) => [claimSignature(n.pool, 'c1', 'race', T0, WINDOW), claimSignature(n.pool, 'c1', 'race', T0, WINDOW)]));
    assert.equal(results.filter(Boolean).length, 1);
  });

  it('prunes pairs seen before the cut only', async () => {
    const [a] = await nodes(1);
    await claimSignature(a!.pool, 'c1', 'old', T0, WINDOW);
    await claimSignature(a!.pool, 'c1', 'new', T0 + 1000, WINDOW);
    assert.equal(await pruneSignatures(a!.pool, T0), 1);
    assert.equal(await claimSignature(a!.pool, 'c1', 'new', T0 + 2000, WINDOW), false);
  });
});
