import type { Clock } from '../../shared/clock.ts';
import type { PgQueryable } from '../store/pg/pool.ts';
import { pruneSignatures } from './pg-replay-claims.ts';

/** Replay pairs older than the window leave the shared table this often (any node may prune). */
const REPLAY_PRUNE_MS = 60_000;

/** Prunes the shared replay window's old pairs from this node; returns the stop. */
export function startReplayPruning(db: PgQueryable, clock: Clock, windowMs: number, log: (line: string) => void): () => void {
  const timer = setInterval(() => {
    pruneSignatures(db, clock.now() - windowMs).catch((error: unknown) => log(`replay protection: pruning failed: ${(error as Error).message}`));
  }, REPLAY_PRUNE_MS);
  timer.unref();
  return () => clearInterval(timer);
}
