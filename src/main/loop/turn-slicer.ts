/**
 * Work that falls due together (reply timers whose quiet periods end in the same millisecond, the
 * deliveries of one committed batch) would otherwise run in one turn of the event loop and hold
 * every HTTP request behind it. A slicer runs such tasks in arrival order, at most `budgetMs` of
 * synchronous work per turn (always at least one task), and yields with setImmediate between
 * slices so the poll phase serves sockets in between.
 */
export interface TurnSlicer {
  /** Queues `task` behind the ones already queued; returns a cancel function (no-op once it ran). */
  run(task: () => void): () => void;
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

interface Entry {
  task: () => void;
  cancelled: boolean;
}

export function createTurnSlicer(options: TurnSlicerOptions = {}): TurnSlicer {
  const budgetMs = options.budgetMs ?? DEFAULT_TURN_BUDGET_MS;
  const now = options.now ?? (() => performance.now());
  // A plain array with a head index: shift() on thousands of entries is quadratic.
  let queue: Entry[] = [];
  let head = 0;
  let live = 0;
  let scheduled = false;

  function slice(): void {
    scheduled = false;
    const start = now();
    let ran = 0;
    while (head < queue.length) {
      if (ran > 0 && now() - start >= budgetMs) break;
      const entry = queue[head]!;
      queue[head++] = undefined as unknown as Entry;
      if (entry.cancelled) continue;
      entry.cancelled = true;
      live--;
      ran++;
      try {
        entry.task();
      } catch (error) {
        options.onError?.(error);
      }
    }
    if (head >= queue.length) {
      queue = [];
      head = 0;
    } else schedule();
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(slice);
  }

  return {
    run(task) {
      const entry: Entry = { task, cancelled: false };
      queue.push(entry);
      live++;
      schedule();
      return () => {
        if (entry.cancelled) return;
        entry.cancelled = true;
        live--;
      };
    },
    pending: () => live,
  };
}
