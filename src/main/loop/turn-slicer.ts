/**
 * Work that falls due together (reply timers whose quiet periods end in the same millisecond, the
 * deliveries of one committed batch) would otherwise run in one turn of the event loop and hold
 * every HTTP request behind it. A slicer runs such tasks in arrival order, at most `budgetMs` of
 * synchronous work per turn (always at least one task), and yields with setImmediate between
 * slices so the poll phase serves sockets in between.
 */
export interface TurnSlicer {
  /**
   * Queues `task` behind the ones already queued in its lane; returns a cancel function (no-op
   * once it ran). 'first' tasks run before every 'normal' one still waiting.
   */
  run(task: () => void, lane?: Lane): () => void;
  /** Tasks queued and not yet run or cancelled. */
  pending(): number;
}

export interface TurnSlicerOptions {
  /** Synchronous work allowed per turn before yielding. */
  budgetMs?: number;
  /** Time source for the budget (monotonic milliseconds); tests inject their own. */
  now?: () => number;
  /** Called when a task throws: the slicer goes on with the next one. */
  onError?: (error: unknown) => void;
}

export const DEFAULT_TURN_BUDGET_MS = 2;

/**
 * Chat messages handled per turn (src/main/http/server.ts). Measured with bench/ingest at 100
 * connections against handling in the poll phase: the loop delay p99 fell from 25.7–39.2 to
 * 13.3–18.1 ms (website_dialog) and 20.2–23.3 ms (auto_dialog) at 4 and 8 ms, with throughput
 * within the spread; 4 ms keeps a turn short when the cores are shared.
 */
export const INGEST_TURN_BUDGET_MS = 4;

/**
 * 'first' is for work that finishes what an earlier task started (a delivery whose reply is
 * already committed): run behind a backlog of new work (quiet periods that just ended), it held
 * its outbox slot for hundreds of milliseconds and the burst's deliveries slowed to a trickle.
 */
export type Lane = 'first' | 'normal';

interface Entry {
  task: () => void;
  cancelled: boolean;
}

export function createTurnSlicer(options: TurnSlicerOptions = {}): TurnSlicer {
  const budgetMs = options.budgetMs ?? DEFAULT_TURN_BUDGET_MS;
  const now = options.now ?? (() => performance.now());
  const lanes = { first: createQueue(), normal: createQueue() };
  let scheduled = false;

  function slice(): void {
    scheduled = false;
    const start = now();
    let ran = 0;
    let ranNormal = false;
    for (;;) {
      const spent = ran > 0 && now() - start >= budgetMs;
      // Past the budget, one 'normal' task still runs if none has: an outbox draining a backlog
      // keeps the first lane full, and quiet periods that ended must not wait for all of it.
      const first = spent ? undefined : lanes.first.take();
      const entry = first ?? (spent && ranNormal ? undefined : lanes.normal.take());
      if (!entry) break;
      if (!first) ranNormal = true;
      entry.cancelled = true;
      ran++;
      try {
        entry.task();
      } catch (error) {
        options.onError?.(error);
      }
    }
    if (lanes.first.live() + lanes.normal.live() > 0) schedule();
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(slice);
  }

  return {
    run(task, lane = 'normal') {
      const entry: Entry = { task, cancelled: false };
      const queue = lanes[lane];
      queue.push(entry);
      schedule();
      return () => queue.cancel(entry);
    },
    pending: () => lanes.first.live() + lanes.normal.live(),
  };
}

/** A FIFO of entries; a plain array with a head index, as shift() on thousands is quadratic. */
function createQueue() {
  let items: Entry[] = [];
  let head = 0;
  let live = 0;
  return {
    push(entry: Entry): void {
      items.push(entry);
      live++;
    },
    /** The next entry not cancelled, or undefined; cancelled ones are dropped on the way. */
    take(): Entry | undefined {
      while (head < items.length) {
        const entry = items[head]!;
        items[head++] = undefined as unknown as Entry;
        if (head >= items.length) {
          items = [];
          head = 0;
        }
        if (entry.cancelled) continue;
        live--;
        return entry;
      }
      return undefined;
    },
    cancel(entry: Entry): void {
      if (entry.cancelled) return;
      entry.cancelled = true;
      live--;
    },
    live: () => live,
  };
}
