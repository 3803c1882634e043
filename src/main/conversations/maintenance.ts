import type { Clock } from '../../shared/clock.ts';
import type { ServerConfig } from '../config/server-config.ts';
import type { Store } from '../store/index.ts';
import type { MessageWriter } from './message-service.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** Rows deleted per write: small enough that ingest never waits long behind a prune. */
export const PRUNE_BATCH = 1000;

export interface MaintenanceDeps {
  store: Store;
  writer: MessageWriter;
  clock: Clock;
  config: Pick<ServerConfig, 'requestLogRetentionDays' | 'requestLogMaxRows' | 'requestLogMaxUnverifiedRows' | 'idempotencyRetentionHours'>;
  log: (line: string) => void;
}

/**
 * Once a minute (on the injected clock), and once at start: the request log is cut by age and by
 * size (verified and unverified rows each to their own limit), then idempotency records older
 * than their retention (never below the replay window, so a replayed signature is still refused).
 * A batch per write, each its own group commit, so ingest keeps committing in between; the checks
 * read only the ends of indexes and the log's row counts.
 */
export function startMaintenance(deps: MaintenanceDeps): { stop(): Promise<void>; busy(): number; settled(): Promise<void> } {
  const { store, writer, clock, config } = deps;
  let pruning: Promise<void> | null = null;
  let stopping = false;
  // A pass asked for while one runs is run after it: the rows it was meant for may have come since.
  let again = false;

  const prune = async (): Promise<void> => {
    const limits = {
      before: clock.now() - config.requestLogRetentionDays * DAY,
      maxRows: config.requestLogMaxRows,
      maxUnverifiedRows: config.requestLogMaxUnverifiedRows,
    };
    if (store.requestLog.needsPrune(limits)) {
      for (;;) {
        const result = await writer.submit({ kind: 'prune_request_log', limits: { ...limits, batch: PRUNE_BATCH } });
        if (result?.kind !== 'changed' || result.count === 0 || stopping) break;
      }
    }
    const before = clock.now() - config.idempotencyRetentionHours * HOUR;
    if (stopping || !store.idempotency.needsPrune(before)) return;
    for (;;) {
      const result = await writer.submit({ kind: 'prune_idempotency', before, batch: PRUNE_BATCH });
      if (result?.kind !== 'changed' || result.count === 0 || stopping) return;
    }
  };
  const maintain = (): void => {
    if (pruning) {
      again = true;
      return;
    }
    pruning = prune()
      .catch((error: unknown) => deps.log(`pruning failed: ${(error as Error).message}`))
      .finally(() => {
        pruning = null;
        if (again && !stopping) {
          again = false;
          maintain();
        }
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
    /** 1 while a pass runs (its batches, and a pass asked for meanwhile); for `RunningService.quiesce`. */
    busy: () => (pruning ? 1 : 0),
    /** Resolves when the pass running now has ended. */
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
