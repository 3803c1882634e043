/** Time source and timers; injected everywhere so time-based behaviour is tested without sleeping. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `fn` after `ms` of this clock's time; returns a cancel function. */
  after(ms: number, fn: () => void): () => void;
  /**
   * Timers whose time has come and that have not run yet (a zero delay waits for the next turn).
   * Only a clock that can tell has it; `RunningService.quiesce` waits for them to run.
   */
  due?(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  after(ms, fn) {
    const t = setTimeout(fn, Math.max(0, ms));
    // Timers never keep the process alive on their own: the servers do.
    if (typeof t === 'object' && t !== null && 'unref' in t) (t as { unref(): void }).unref();
    return () => clearTimeout(t);
  },
};

export interface ManualClock extends Clock {
  set(ms: number): void;
  /** Moves time forward, firing each due timer at its own time, in order. */
  advance(ms: number): void;
  /** Timers still waiting for the clock to reach them. */
  pending(): number;
  /** Zero-delay timers waiting for their turn (never more than a turn: they need no `advance`). */
  due(): number;
}

/** A clock tests move by hand. */
export function manualClock(start = Date.UTC(2026, 0, 1)): ManualClock {
  let t = start;
  let seq = 0;
  /** Zero-delay timers set and not yet run or cancelled. */
  let dueNow = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const nextDue = (until: number): [number, { at: number; fn: () => void }] | undefined => {
    let best: [number, { at: number; fn: () => void }] | undefined;
    for (const entry of timers) if (entry[1].at <= until && (!best || entry[1].at < best[1].at)) best = entry;
    return best;
  };
  return {
    now: () => t,
    after(ms, fn) {
      if (ms <= 0) {
        // Already due: runs on the next turn, as a real zero-delay timer would.
        dueNow++;
        let waiting = true;
        const timer = setTimeout(() => {
          waiting = false;
          dueNow--;
          fn();
        }, 0);
        return () => {
          if (!waiting) return;
          waiting = false;
          dueNow--;
          clearTimeout(timer);
        };
      }
      const id = ++seq;
      timers.set(id, { at: t + ms, fn });
      return () => void timers.delete(id);
    },
    set(ms) {
      t = ms;
    },
    advance(ms) {
      const until = t + ms;
      for (let due = nextDue(until); due; due = nextDue(until)) {
        timers.delete(due[0]);
        t = Math.max(t, due[1].at);
        due[1].fn();
      }
      t = until;
    },
    pending: () => timers.size,
    due: () => dueNow,
  };
}
