import type { ReplayStore } from '../replay/replay.ts';
import type { MessageWriter } from '../conversations/message-service.ts';
import type { SecretBox } from '../auth/secret-box.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Caller } from '../../shared/console-roles.ts';
import type { ConsoleHandlers } from '../../shared/console-api.ts';
import { auditDetail } from '../conversations/workspace-commands.ts';
import { createReplay, type ReplayPlan } from '../replay/replay.ts';
import type { ReplayRunRow } from '../store/replay.ts';
import { createReplayRunner, ReplayRunningError, summaryOf } from '../replay/replay-runs.ts';
import { ReplayInputError } from '../replay/window.ts';
import type { PendingChanges } from '../replay/candidate.ts';
import { ConsoleError } from './console-error.ts';

export interface ReplayHandlerDeps {
  store: ReplayStore;
  writer: MessageWriter;
  clock: Clock;
  box: SecretBox;
  /** The built-in engine's threshold now. */
  kbThreshold: () => number;
  engineTimeoutMs: number;
  fallbackText: string;
  contextLines: number;
  /** The proposals store's pending changes; absent in a build without one. */
  pendingChanges?: PendingChanges;
  /**
   * This node's id when several nodes share the store (PostgreSQL): runs are claimed in the
   * database, one in the whole installation, and shown and cancelled from any node. Absent: one
   * process owns the store (SQLite) and keeps its run in memory.
   */
  replayNodeId?: string;
  log?: (line: string) => void;
}

type ReplayMethods = 'estimateReplay' | 'startReplay' | 'getReplayRun' | 'listReplayRuns' | 'cancelReplay';

/**
 * Replays from the console: an admin's, one at a time (on several nodes, one in the whole
 * installation), audited when started and when cancelled on the node that was asked.
 */
export function createReplayHandlers(deps: ReplayHandlerDeps): Pick<ConsoleHandlers, ReplayMethods> {
  const { store, clock } = deps;
  const replay = createReplay({
    store,
    openKey: (sealed) => deps.box.open(sealed),
    kbThreshold: deps.kbThreshold,
    engineTimeoutMs: deps.engineTimeoutMs,
    fallbackText: deps.fallbackText,
    contextLines: deps.contextLines,
    clock,
    ...(deps.pendingChanges ? { pendingChanges: deps.pendingChanges } : {}),
  });
  const runner = createReplayRunner(store, replay, clock, deps.log ?? ((line) => console.error(line)), deps.replayNodeId ?? null);
  const busyError = (running: number): ConsoleError => new ConsoleError('replay_running', `replay ${running} is still running: wait for it or cancel it first`);
  const planOf = async (input: Parameters<typeof replay.plan>[0]): Promise<ReplayPlan> => {
    try {
      return await replay.plan(input, clock.now());
    } catch (error) {
      if (error instanceof ReplayInputError) throw new ConsoleError('invalid_input', error.message);
      throw error;
    }
  };
  const audit = async (caller: Caller, detail: Record<string, unknown>): Promise<void> => {
    const operator = caller.account ? { ...caller.account, address: caller.address } : null;
    await deps.writer.submit({ kind: 'audit', entry: { at: clock.now(), operator, action: 'replay', conversationId: null, detail: auditDetail(detail), address: caller.address } });
  };
  /** Runs as stored; when one shows a node that stopped giving heartbeats, it is failed and they are read again (when asked, not on a timer). */
  const readRuns = async (read: () => Promise<ReplayRunRow[]>): Promise<ReplayRunRow[]> => {
    const runs = await read();
    if (!runs.some((run) => runner.stale(run))) return runs;
    await runner.failStale();
    return read();
  };
  const runOf = async (id: number) => {
    const [run] = await readRuns(async () => {
      const one = await store.replay.run(id);
      return one ? [one] : [];
    });
    if (!run) throw new ConsoleError('not_found', `no replay run ${id}`);
    return run;
  };

  return {
    async estimateReplay(input) {
      return replay.estimate(await planOf(input));
    },
    async startReplay(input, caller) {
      const refuseIfRunning = (): void => {
        const running = runner.busy();
        if (running !== null) throw busyError(running);
      };
      refuseIfRunning();
      const plan = await planOf(input);
      if (plan.questions.length === 0) throw new ConsoleError('invalid_input', 'no customer questions in that window to replay');
      const estimate = await replay.estimate(plan);
      // Asked again with nothing awaited before the start: another start may have begun while this one planned.
      refuseIfRunning();
      let runId: number;
      try {
        runId = await runner.start(plan, caller.account);
      } catch (error) {
        // Another node's run is running (the claim in the database refused this one).
        if (error instanceof ReplayRunningError) throw busyError(error.running);
        throw error;
      }
      await audit(caller, { run: runId, change: 'start', questions: plan.questions.length, llmCalls: estimate.llmCalls, ...plan.params, systemPrompt: plan.params.systemPrompt === null ? null : '(set)' });
      return { runId, estimate };
    },
    async getReplayRun(input) {
      const run = await runOf(input.id);
      return { ...summaryOf(run, runner.progress(run)), rows: await store.replay.rows(input.id, { changedOnly: input.changedOnly, limit: input.limit }) };
    },
    async listReplayRuns(input) {
      const runs = await readRuns(async () => store.replay.runs(input.limit));
      return runs.map((run) => summaryOf(run, runner.progress(run)));
    },
    async cancelReplay(input, caller) {
      await runOf(input.id);
      const cancelled = await runner.cancel(input.id);
      if (cancelled) await audit(caller, { run: input.id, change: 'cancel' });
      return { cancelled };
    },
  };
}
