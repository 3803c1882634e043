import type pg from 'pg';
import type { Clock } from '../../shared/clock.ts';
import { startMinutePass, type MinutePass } from '../loop/minute-pass.ts';

/** pg_try_advisory_lock's key ("SBSTWAIT"): one node sweeps at a time; a node whose minute comes meanwhile skips it. */
export const STAFF_WAIT_SWEEP_LOCK = '5999449275317176660';

export interface PgStaffWaitSweepDeps {
  pool: pg.Pool;
  clock: Clock;
  /** The watch's sweep (staff-wait.ts): checks each wait that fell due; returns the alerts it raised. */
  sweep: (stopping: () => boolean) => Promise<number>;
  log: (line: string) => void;
}

/**
 * A staff-wait timer lives in the memory of the node that stored the customer's line: a node that
 * dies, and is replaced rather than restarted, would leave that customer waiting unseen. So once
 * a minute on the injected clock (not at start: the watch's start has just read the same list and
 * set its timers) every node tries an advisory lock, and the one that holds it checks every wait
 * that has fallen due and is not in Needs you yet, whoever stored it: a wait is checked at most a
 * minute (and the sweep's own run) after it fell due while any node runs. A minute that comes
 * while a node sweeps is skipped, as pruning's (pg-maintenance.ts): sweeps never overlap, and a
 * node that dies mid-sweep lets go of the lock with its connection. Each node's minute is its
 * own, so N nodes may sweep up to N times a minute, one after the other: a sweep that finds
 * nothing due is the scan alone (13 ms with 2,000 held conversations, bench/pg-staff-wait.ts).
 * The alerts go out as the watch's own do (its onAlert: this node's console events, relayed to
 * the other nodes).
 */
export function startPgStaffWaitSweep(deps: PgStaffWaitSweepDeps): MinutePass {
  const { pool, log } = deps;
  const sweep = async (stopping: () => boolean): Promise<void> => {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      const locked = (await client.query('SELECT pg_try_advisory_lock($1::bigint) AS locked', [STAFF_WAIT_SWEEP_LOCK])).rows[0] as { locked: boolean };
      if (!locked.locked) return;
      try {
        const alerts = await deps.sweep(stopping);
        if (alerts > 0) log(`staff wait: the minute's sweep put ${alerts} conversation(s) in Needs you (a customer waited on staff in the IM, and no node had checked yet)`);
      } finally {
        // A lock that could not be let go must not go back to the pool with its connection (no node would sweep again): the connection is ended.
        await client.query('SELECT pg_advisory_unlock($1::bigint)', [STAFF_WAIT_SWEEP_LOCK]).catch((error: unknown) => {
          broken = error as Error;
        });
      }
    } finally {
      client.release(broken);
    }
  };
  return startMinutePass({
    clock: deps.clock,
    pass: (stopping) => sweep(stopping).catch((error: unknown) => log(`staff wait sweep failed: ${(error as Error).message}; the next minute tries again`)),
    rerun: false,
    log,
    atStart: false,
  });
}
