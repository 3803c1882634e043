/** Time source; injected everywhere so time-based behaviour is tested without sleeping. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export function manualClock(start = Date.UTC(2026, 0, 1)): Clock & { set(ms: number): void; advance(ms: number): void } {
  let t = start;
  return {
    now: () => t,
    set: (ms) => {
      t = ms;
    },
    advance: (ms) => {
      t += ms;
    },
  };
}
