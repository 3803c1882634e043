import type { Clock } from '../../shared/clock.ts';
import type { ServerConfig } from '../config/server-config.ts';
import type { Store } from '../store/index.ts';
import type { MessageWriter } from './message-service.ts';
import { startMinutePass, type MinutePass } from '../loop/minute-pass.ts';

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
/** What a pass prunes the request log to, now: rows older than the retention, and each kind past its row limit. */
export function requestLogLimits(config: MaintenanceDeps['config'], now: number): { before: number; maxRows: number; maxUnverifiedRows: number } {
  return { before: now - config.requestLogRetentionDays * DAY, maxRows: config.requestLogMaxRows, maxUnverifiedRows: config.requestLogMaxUnverifiedRows };
}

/** Idempotency records older than this go (their retention, in the config). */
export const idempotencyBefore = (config: MaintenanceDeps['config'], now: number): number => now - config.idempotencyRetentionHours * HOUR;

export function startMaintenance(deps: MaintenanceDeps): MinutePass {
  const { store, writer, clock, config } = deps;
  const prune = async (stopping: () => boolean): Promise<void> => {
    const limits = requestLogLimits(config, clock.now());
    if (store.requestLog.needsPrune(limits)) {
      for (;;) {
        const result = await writer.submit({ kind: 'prune_request_log', limits: { ...limits, batch: PRUNE_BATCH } });
        if (result?.kind !== 'changed' || result.count === 0 || stopping()) break;
      }
    }
    const before = idempotencyBefore(config, clock.now());
    if (stopping() || !store.idempotency.needsPrune(before)) return;
    for (;;) {
      const result = await writer.submit({ kind: 'prune_idempotency', before, batch: PRUNE_BATCH });
      if (result?.kind !== 'changed' || result.count === 0 || stopping()) return;
    }
  };
  return startMinutePass({ clock, pass: prune, rerun: true, log: deps.log });
}
