import type { StoreContract } from '../store/contract.ts';
import type { ReplayRunRow } from '../store/replay.ts';
import type { Clock } from '../../shared/clock.ts';
import type { ReplayRunSummary, ReplayTotals } from '../../shared/console-replay.ts';
import type { Replay, ReplayPlan, ReplayResult } from './replay.ts';
import { summarize } from './diff.ts';

/**
 * How often the node running a replay renews its run's heartbeat, with its progress: another
 * node shows that progress at most this late, and a cancel sent to another node stops the run
 * within this (plus the moment the calls in flight take to abort).
 */
export const REPLAY_HEARTBEAT_MS = 5_000;

/**
 * A run whose heartbeat is older than this is taken for dead (its node stopped) and failed, so
 * that another replay may start. Twelve heartbeats: a heartbeat may wait up to 20 s on a database
 * that struggles (5 s for a connection, 15 s of query time-out, pool.ts), so a node misses three in
 * a row before its run is lost; and nodes compare one's clock with another's, so clocks may
 * disagree by up to 55 s. A dead node's run blocks a new replay for at most this long.
 */
export const REPLAY_STALE_MS = 60_000;

/** Another run is running (on this node or another): the claim was refused. */
export class ReplayRunningError extends Error {
  readonly running: number;
  constructor(running: number) {
    super(`replay ${running} is still running`);
    this.running = running;
  }
}

/** Where runs are kept. */
export type RunStore = Pick<StoreContract, 'replay'>;

/**
 * Runs a planned replay and keeps it: the run's row first (listed as running), then its rows,
 * totals and status in one transaction. A failure is kept as failed, with its message. With an
 * `owner`, the row is claimed for that node (ReplayRunningError when another run is running), and
 * the outcome is written only while the run is still the node's.
 */
export async function executeReplay(
  store: RunStore,
  replay: Replay,
  plan: ReplayPlan,
  options: {
    startedBy: { id: string; name: string } | null;
    at: () => number;
    signal: AbortSignal;
    owner?: { nodeId: string; staleMs: number };
    onStart?: (runId: number) => void;
    onProgress?: (done: number, total: number) => void;
  },
): Promise<{ runId: number; result: ReplayResult; totals: ReplayTotals }> {
  const { owner } = options;
  let runId: number;
  if (owner) {
    const claim = await store.replay.claimRun(plan.params, options.startedBy, options.at(), { nodeId: owner.nodeId, total: plan.questions.length, staleMs: owner.staleMs });
    if ('running' in claim) throw new ReplayRunningError(claim.running);
    runId = claim.runId;
  } else runId = await store.replay.startRun(plan.params, options.startedBy, options.at());
  options.onStart?.(runId);
  const nodeId = owner?.nodeId ?? null;
  let result: ReplayResult;
  try {
    result = await replay.run(plan, { signal: options.signal, ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
  } catch (error) {
    await store.replay.finishRun(runId, 'failed', options.at(), null, [], (error as Error).message, nodeId);
    throw error;
  }
  const totals = summarize(result.rows, result.elapsedMs);
  await store.replay.finishRun(runId, result.status, options.at(), totals, result.rows, null, nodeId);
  return { runId, result, totals };
}

/** The console's view of a run: its row and progress, without the owner's bookkeeping. */
export const summaryOf = ({ owner: _owner, ...run }: ReplayRunRow, progress: { done: number; total: number } | null = null): ReplayRunSummary => ({ ...run, progress });

/**
 * The console's replays: one at a time in the background, followed by polling getReplayRun, and
 * cancelled by id.
 *
 * Without a node (SQLite: one process owns the store), "one at a time" is this process's, progress
 * is kept in memory, and runs left running by a process that stopped are marked failed at start.
 *
 * With a node (PostgreSQL's several nodes), a run is its node's: claimed in the database (one
 * running in the whole installation), its heartbeat renewed every REPLAY_HEARTBEAT_MS with its
 * progress, which any node shows. A cancel on the owner aborts at once; on another node it is a
 * request on the row, which the owner reads at its next heartbeat. Only runs whose heartbeat is
 * older than REPLAY_STALE_MS are failed (at start, in a claim, when a console reads one): a live
 * run on another node is never touched. A node that finds its run failed as stale stops it.
 */
export function createReplayRunner(store: RunStore, replay: Replay, clock: Clock, log: (line: string) => void, nodeId: string | null = null) {
  const at = (): number => clock.now();
  // On SQLite this runs now (a failure throws here, as the service starts); elsewhere runs start after it.
  const interrupted = Promise.resolve(nodeId === null ? store.replay.interruptRunning(at()) : store.replay.failStale(at(), REPLAY_STALE_MS));
  interrupted.catch((error: unknown) => log(`replay: runs left running could not be marked failed: ${(error as Error).message}`));
  let active: { runId: number; controller: AbortController; done: number; total: number } | null = null;

  /** Renews the run's heartbeat until it ends; stops the run when a stop was asked or the run is no longer this node's. */
  function keepAlive(node: string, state: NonNullable<typeof active>): () => void {
    let stopped = false;
    let cancelTimer = (): void => {};
    const beat = async (): Promise<void> => {
      try {
        const answer = await store.replay.heartbeat(state.runId, node, at(), state.done, state.total);
        if (stopped || state.controller.signal.aborted) return;
        if (answer === null) {
          log(`replay ${state.runId}: no longer running on this node (failed as stale: its heartbeat was late); stopping it`);
          state.controller.abort();
        } else if (answer.cancelRequested) state.controller.abort();
      } catch (error) {
        log(`replay ${state.runId}: its heartbeat could not be renewed: ${(error as Error).message}`);
      }
    };
    // At a fixed rate, the next one set before this one's query: a slow answer delays no later
    // heartbeat, and one still waiting is not sent twice.
    let inFlight = false;
    const tick = (): void => {
      if (stopped) return;
      cancelTimer = clock.after(REPLAY_HEARTBEAT_MS, tick);
      if (inFlight) return;
      inFlight = true;
      void beat().finally(() => (inFlight = false));
    };
    cancelTimer = clock.after(REPLAY_HEARTBEAT_MS, tick);
    return () => {
      stopped = true;
      cancelTimer();
    };
  }

  return {
    busy: (): number | null => active?.runId ?? null,
    /** Starts the plan; resolves with the run's id once its row exists. Throws ReplayRunningError when another node's run is running. */
    async start(plan: ReplayPlan, startedBy: { id: string; name: string } | null): Promise<number> {
      const controller = new AbortController();
      let runId = 0;
      let refused: ReplayRunningError | null = null;
      let stopBeating = (): void => {};
      const state = { runId: 0, controller, done: 0, total: plan.questions.length };
      // Taken before the first await: a second start checking busy() meanwhile sees this one.
      active = state;
      await interrupted.catch(() => {});
      const { promise: started, resolve: onStarted } = Promise.withResolvers<void>();
      void executeReplay(store, replay, plan, {
        startedBy,
        at,
        signal: controller.signal,
        ...(nodeId !== null ? { owner: { nodeId, staleMs: REPLAY_STALE_MS } } : {}),
        onStart: (id) => {
          runId = id;
          state.runId = id;
          if (nodeId !== null) stopBeating = keepAlive(nodeId, state);
          onStarted();
        },
        onProgress: (done) => {
          state.done = done;
        },
      })
        .catch((error: unknown) => {
          if (error instanceof ReplayRunningError) refused = error;
          else log(`replay ${runId} failed: ${(error as Error).message}`);
        })
        .finally(() => {
          stopBeating();
          if (active === state) active = null;
          // A run whose row could not be made: its failure is logged; the caller gets run 0, as before.
          onStarted();
        });
      await started;
      if (refused) throw refused;
      return runId;
    },
    /** Stops a run: this node's at once; another node's at its next heartbeat (false when no node runs it). */
    async cancel(runId: number): Promise<boolean> {
      if (active && active.runId === runId) {
        if (active.controller.signal.aborted) return false;
        active.controller.abort();
        return true;
      }
      return nodeId !== null && (await store.replay.requestCancel(runId, at()));
    },
    /** Questions done so far: this node's run from memory, another node's from its last heartbeat. */
    progress(run: ReplayRunRow): { done: number; total: number } | null {
      if (active && active.runId === run.id) return { done: active.done, total: active.total };
      return nodeId !== null && run.status === 'running' && run.owner ? { done: run.owner.done, total: run.owner.total } : null;
    },
    /** A run shown as running whose node stopped giving heartbeats (never this node's own). */
    stale(run: ReplayRunRow): boolean {
      if (nodeId === null || run.status !== 'running' || active?.runId === run.id) return false;
      return (run.owner?.heartbeatAt ?? run.createdAt) < at() - REPLAY_STALE_MS;
    },
    /** Fails the stale runs now (a console read one). */
    failStale: async (): Promise<number> => store.replay.failStale(at(), REPLAY_STALE_MS),
  };
}

export type ReplayRunner = ReturnType<typeof createReplayRunner>;
