import type pg from 'pg';
import type { Clock } from '../../shared/clock.ts';
import type { ServerConfig } from '../config/server-config.ts';
import { pgPruneQueries } from '../store/pg/prune-queries.ts';
import { idempotencyBefore, PRUNE_BATCH, requestLogLimits } from './maintenance.ts';
import { startMinutePass, type MinutePass } from '../loop/minute-pass.ts';

/** pg_try_advisory_lock's key ("SBPRUNE1"): one node prunes at a time; the others skip that minute. */
export const PRUNE_LOCK = '5999445968159655217';

export interface PgMaintenanceDeps {
  pool: pg.Pool;
  clock: Clock;
  config: Pick<ServerConfig, 'requestLogRetentionDays' | 'requestLogMaxRows' | 'requestLogMaxUnverifiedRows' | 'idempotencyRetentionHours'>;
  log: (line: string) => void;
}

/**
 * SQLite's maintenance (maintenance.ts) for nodes sharing a PostgreSQL database: once a minute on
 * the injected clock, and once at start, the request log by age and size, the dashboard's old
 * minutes, and idempotency records past their retention, a batch per statement. Every node runs
 * it, and the node that holds the advisory lock does the work, so nodes never delete the same
 * rows at once; a node that dies mid-pass lets go of the lock with its connection.
 */
export function startPgMaintenance(deps: PgMaintenanceDeps): MinutePass {
  const { pool, clock, config } = deps;
  const prune = async (stopping: () => boolean): Promise<void> => {
    const client = await pool.connect();
    try {
      const locked = (await client.query('SELECT pg_try_advisory_lock($1::bigint) AS locked', [PRUNE_LOCK])).rows[0] as { locked: boolean };
      if (!locked.locked) return;
      try {
        const q = pgPruneQueries(client);
        const limits = requestLogLimits(config, clock.now());
        if (await q.requestLogNeedsPrune(limits)) {
          while (!stopping() && (await q.requestLog({ ...limits, batch: PRUNE_BATCH })) > 0);
        }
        const before = idempotencyBefore(config, clock.now());
        while (!stopping() && (await q.idempotency(before, PRUNE_BATCH)) > 0);
      } finally {
        await client.query('SELECT pg_advisory_unlock($1::bigint)', [PRUNE_LOCK]);
      }
    } finally {
      client.release();
    }
  };
  // A minute that comes during a pass is skipped: the lock holder's next minute catches up.
  return startMinutePass({ clock, pass: prune, rerun: false, log: deps.log });
}
