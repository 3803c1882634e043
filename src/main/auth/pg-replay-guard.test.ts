import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason } from '../../../test/helpers/postgres.ts';
import { workNodes } from '../../../test/helpers/pg-work-fixture.ts';
import { createPgReplayGuard } from './pg-replay-guard.ts';

const WINDOW = 600_000;
const T0 = 1_800_000_000_000;

describe('replay protection shared by PostgreSQL nodes', { skip: postgresSkipReason() }, () => {
  const nodes = workNodes('replay');

  it('refuses on node B a signature accepted or in flight on node A, and frees it when A refused the request', async () => {
    const [a, b] = await nodes(2);
    const onA = createPgReplayGuard(a!.pool, WINDOW);
    const onB = createPgReplayGuard(b!.pool, WINDOW);
    assert.equal(await onA.reserve('c1', 'sig-1', T0), true);
    assert.equal(await onB.reserve('c1', 'sig-1', T0 + 1), false, 'in flight on A');
    assert.equal(await onB.reserve('c2', 'sig-1', T0 + 1), true, 'another client may sign the same bytes');
    await onA.release('c1', 'sig-1');
    assert.equal(await onB.reserve('c1', 'sig-1', T0 + 2), true, 'A refused it (a 400, a 429): an honest retry is no replay');
    onB.confirm();
    assert.equal(await onA.reserve('c1', 'sig-1', T0 + WINDOW), false, 'accepted on B, still inside the window');
    assert.equal(await onA.reserve('c1', 'sig-1', T0 + 2 + WINDOW), true, 'past the window the signature is taken afresh');
  });

  it('lets exactly one of many nodes racing on one signature through', async () => {
    const pools = await nodes(4);
    const guards = pools.map((n) => createPgReplayGuard(n.pool, WINDOW));
    const results = await Promise.all(guards.flatMap((g) => [g.reserve('c1', 'race', T0), g.reserve('c1', 'race', T0)]));
    assert.equal(results.filter(Boolean).length, 1);
  });

  it('prunes pairs older than the window only', async () => {
    const [a] = await nodes(1);
    const g = createPgReplayGuard(a!.pool, WINDOW);
    await g.reserve('c1', 'old', T0);
    await g.reserve('c1', 'new', T0 + 1000);
    assert.equal(await g.prune(T0 + WINDOW), 1);
    assert.equal(await g.reserve('c1', 'new', T0 + WINDOW), false);
  });
});

describe('a release the database did not take', () => {
  it('is tried again until it lands, so the refused request may be retried', async () => {
    let down = true;
    const deleted: unknown[][] = [];
    let landed: () => void = () => {};
    const done = new Promise<void>((resolve) => (landed = resolve));
    const db = {
      query: async (text: string, values: unknown[]) => {
        if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        deleted.push(values);
        landed();
        return { rows: [], rowCount: 1 } as never;
      },
    } as never;
    const lines: string[] = [];
    const g = createPgReplayGuard(db, WINDOW, (l) => lines.push(l));
    await g.release('c1', 'sig');
    assert.equal(g.pendingReleases(), 1);
    assert.match(lines[0]!, /releasing a refused request's signature failed .*ECONNREFUSED/);
    down = false;
    await done;
    while (g.pendingReleases() > 0) await new Promise((r) => setImmediate(r));
    assert.deepEqual(deleted, [['c1', 'sig']]);
    assert.equal(g.pendingReleases(), 0);
    g.close();
  });
});
