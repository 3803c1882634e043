/**
 * A barrier for tests and tools: "everything already set in motion has finished". The service is a
 * chain of hand-offs (a request commits a message and arms a timer; a due timer queues a reply in
 * the slicer; the reply's engine call commits an answer and wakes the outbox; the outbox takes the
 * delivery, sends it and commits the attempt). Each link counts what it holds, and takes over from
 * the previous link before that one lets go, so "every count is zero at once" means the chain has
 * run out, rather than that it is between two links.
 *
 * Nothing here runs on a hot path: the parts only keep counters they need anyway (or one more
 * integer), and the waiting happens in `quiesce` alone, on events, never on a timer.
 */
export interface BusyPart {
  /** Named in the error when it never settles. */
  name: string;
  /** How much of its work is in flight now; 0 when idle. Synchronous and cheap. */
  busy(): number;
  /**
   * Resolves at the next change worth checking again (its own work ended). Absent: the next turn
   * of the event loop, for work that runs in immediates (slicer tasks, a requested scan).
   */
  settled?(): Promise<void>;
}

export interface QuiesceOptions {
  /** A guard, not a wait: fails with what is still busy after this long (real time). */
  timeoutMs?: number;
}

/** The next turn of the event loop (after the immediates queued before it). */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Resolves once every part is idle in the same turn, after at least one full turn of the event
 * loop has run (so immediates queued by work that just finished have had their turn). Fails,
 * naming the busy parts, if that has not happened within `timeoutMs`: an engine or a receiver held
 * by the test keeps its part busy for good, and a quiesce then is the test's own mistake.
 */
export async function quiesce(parts: readonly BusyPart[], options: QuiesceOptions = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  let guard: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    guard = setTimeout(() => resolve('expired'), timeoutMs);
    guard.unref();
  });
  try {
    for (;;) {
      await nextTurn();
      const busy = parts.filter((p) => p.busy() > 0);
      if (busy.length === 0) return;
      // Wait on the first busy part's own event; the others are looked at again after it.
      const first = busy[0]!;
      const outcome = await Promise.race([first.settled ? first.settled() : nextTurn(), expired]);
      if (outcome === 'expired' || Date.now() > deadline) {
        const still = parts.filter((p) => p.busy() > 0).map((p) => `${p.name} (${p.busy()})`);
        if (still.length === 0) return;
        throw new Error(`quiesce: still busy after ${timeoutMs} ms: ${still.join(', ')}`);
      }
    }
  } finally {
    clearTimeout(guard);
  }
}

/** Waiters released when a count falls to zero; a part's `settled` in three lines. */
export function idleWaiters() {
  let waiters: Array<() => void> = [];
  return {
    /** Resolves when `release` is next called. */
    wait: (): Promise<void> => new Promise((resolve) => waiters.push(resolve)),
    release(): void {
      if (waiters.length === 0) return;
      const woken = waiters;
      waiters = [];
      for (const w of woken) w();
    },
  };
}
