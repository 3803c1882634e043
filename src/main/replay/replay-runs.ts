import type { StoreContract } from '../store/contract.ts';
import type { ReplayRunRow } from '../store/replay.ts';
import type { ReplayRunSummary, ReplayTotals } from '../../shared/console-replay.ts';
import type { Replay, ReplayPlan, ReplayResult } from './replay.ts';
import { summarize } from './diff.ts';

/**
 * Runs a planned replay and keeps it: the run's row first (listed as running), then its rows,
 * totals and status in one transaction. A failure is kept as failed, with its message.
 */
/** Where runs are kept. */
export type RunStore = Pick<StoreContract, 'replay'>;

export async function executeReplay(
  store: RunStore,
  replay: Replay,
  plan: ReplayPlan,
  options: { startedBy: { id: string; name: string } | null; at: () => number; signal: AbortSignal; onStart?: (runId: number) => void; onProgress?: (done: number, total: number) => void },
): Promise<{ runId: number; result: ReplayResult; totals: ReplayTotals }> {
  const runId = await store.replay.startRun(plan.params, options.startedBy, options.at());
  options.onStart?.(runId);
  let result: ReplayResult;
  try {
    result = await replay.run(plan, { signal: options.signal, ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
  } catch (error) {
    await store.replay.finishRun(runId, 'failed', options.at(), null, [], (error as Error).message);
    throw error;
  }
  const totals = summarize(result.rows, result.elapsedMs);
  await store.replay.finishRun(runId, result.status, options.at(), totals, result.rows);
  return { runId, result, totals };
}

export const summaryOf = (run: ReplayRunRow, progress: { done: number; total: number } | null = null): ReplayRunSummary => ({ ...run, progress });

/**
 * The console's replays: one at a time in the background, followed by polling getReplayRun, and
 * cancelled by id. Runs left "running" by a process that stopped are marked failed at start.
 */
export function createReplayRunner(store: RunStore, replay: Replay, at: () => number, log: (line: string) => void) {
  // On SQLite this runs now (a failure throws here, as the service starts); elsewhere runs start after it.
  const interrupted = Promise.resolve(store.replay.interruptRunning(at()));
  interrupted.catch((error: unknown) => log(`replay: runs left running could not be marked failed: ${(error as Error).message}`));
  let active: { runId: number; controller: AbortController; done: number; total: number } | null = null;
  return {
    busy: (): number | null => active?.runId ?? null,
    /** Starts the plan; resolves with the run's id once its row exists. */
    async start(plan: ReplayPlan, startedBy: { id: string; name: string } | null): Promise<number> {
      const controller = new AbortController();
      let runId = 0;
      const state = { runId: 0, controller, done: 0, total: plan.questions.length };
      // Taken before the first await: a second start checking busy() meanwhile sees this one.
      active = state;
      await interrupted.catch(() => {});
      const { promise: started, resolve: onStarted } = Promise.withResolvers<void>();
      void executeReplay(store, replay, plan, {
        startedBy,
        at,
        signal: controller.signal,
        onStart: (id) => {
          runId = id;
          state.runId = id;
          onStarted();
        },
        onProgress: (done) => {
          state.done = done;
        },
      })
        .catch((error: unknown) => log(`replay ${runId} failed: ${(error as Error).message}`))
        .finally(() => {
          if (active === state) active = null;
          // A run whose row could not be made: its failure is logged; the caller gets run 0, as before.
          onStarted();
        });
      await started;
      return runId;
    },
    cancel(runId: number): boolean {
      if (!active || active.runId !== runId || active.controller.signal.aborted) return false;
      active.controller.abort();
      return true;
    },
    progress(runId: number): { done: number; total: number } | null {
      return active && active.runId === runId ? { done: active.done, total: active.total } : null;
    },
  };
}

export type ReplayRunner = ReturnType<typeof createReplayRunner>;
