import { availableParallelism } from 'node:os';

/**
 * At most `concurrent` password hashes at once (a core left to the main thread), `queued` more
 * waiting; beyond that a sign-in is refused as busy. scrypt runs on libuv's thread pool (4 threads
 * by default), which file reads and DNS lookups share: 100 sign-ins at once filled it and held a
 * page load for 7.8 s in a review, and on two cores four hashes at once took the main thread's core
 * (the event loop stalled 12–502 ms while 20 agents signed in, bench/team; one at a time: 2–66 ms,
 * the last of the 20 answered after about 2 s).
 */
export class HashBusy extends Error {}

export function createHashGate(concurrent = Math.max(1, availableParallelism() - 1), queued = 64) {
  let running = 0;
  const waiting: Array<() => void> = [];
  return {
    async run<T>(work: () => Promise<T>): Promise<T> {
      if (running >= concurrent) {
        if (waiting.length >= queued) throw new HashBusy('too many sign-ins at once');
        await new Promise<void>((resolve) => waiting.push(resolve));
      } else running++;
      try {
        return await work();
      } finally {
        const next = waiting.shift();
        // The slot passes to the next in line; `running` counts it still.
        if (next) next();
        else running--;
      }
    },
    get running(): number {
      return running;
    },
    get waiting(): number {
      return waiting.length;
    },
  };
}

export type HashGate = ReturnType<typeof createHashGate>;
