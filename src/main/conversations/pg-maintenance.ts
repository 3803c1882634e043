import type pg from 'pg';
import type { Clock } from '../../shared/clock.ts';
import type { ServerConfig } from '../config/server-config.ts';
import { pgPruneQueries } from '../store/pg/prune-queries.ts';
import { PRUNE_BATCH } from './maintenance.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
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
export function startPgMaintenance(deps: PgMaintenanceDeps): { stop(): Promise<void>; busy(): number; settled(): Promise<void> } {
  const { pool, clock, config } = deps;
  let pruning: Promise<void> | null = null;
  let stopping = false;

  const prune = async (): Promise<void> => {
    const client = await pool.connect();
    try {
      const locked = (await client.query('SELECT pg_try_advisory_lock($1::bigint) AS locked', [PRUNE_LOCK])).rows[0] as { locked: boolean };
      if (!locked.locked) return;
      try {
        const q = pgPruneQueries(client);
        const limits = { before: clock.now() - config.requestLogRetentionDays * DAY, maxRows: config.requestLogMaxRows, maxUnverifiedRows: config.requestLogMaxUnverifiedRows };
        if (await q.requestLogNeedsPrune(limits)) {
          while (!stopping && (await q.requestLog({ ...limits, batch: PRUNE_BATCH })) > 0);
        }
        const before = clock.now() - config.idempotencyRetentionHours * HOUR;
        while (!stopping && (await q.idempotency(before, PRUNE_BATCH)) > 0);
      } finally {
        await client.query('SELECT pg_advisory_unlock($1::bigint)', [PRUNE_LOCK]);
      }
    } finally {
      client.release();
    }
  };
  const maintain = (): void => {
    if (pruning) return;
    pruning = prune()
      .catch((error: unknown) => deps.log(`pruning failed: ${(error as Error).message}`))
      .finally(() => {
        pruning = null;
      });
  };
  let cancel = (): void => {};
  const schedule = (): void => {
    cancel = clock.after(MINUTE, () => {
      maintain();
      schedule();
    });
  };
  maintain();
  schedule();
  return {
    busy: () => (pruning ? 1 : 0),
    settled: async () => {
      await pruning;
    },
    async stop() {
      stopping = true;
      cancel();
      await pruning;
    },
  };
}
