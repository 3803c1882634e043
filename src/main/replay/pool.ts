import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Runs `work` over the items with at most `limit` at once, in order, until all are done or
 * `signal` aborts (no new item starts; those started finish or abort themselves). Each item
 * starts on a turn of its own, so a long run of synchronous work (the built-in engine) leaves the
 * event loop to the rest of the process between answers.
 */
export async function runPool<T>(items: readonly T[], limit: number, signal: AbortSignal, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length && !signal.aborted) {
      const item = items[next++]!;
      await nextTurn();
      if (signal.aborted) return;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
}
