import type { ManualClock } from '../../src/shared/clock.ts';

/**
 * Moves a hand-moved clock forward in steps until `work` settles, giving real I/O a moment between
 * steps (a socket aborted at one step is seen before the next). Resolves with the outcome and how
 * much clock time passed; never sleeps for the clock time itself.
 */
export async function driveClock<T>(
  clock: ManualClock,
  work: Promise<T>,
  options: { stepMs?: number; maxMs?: number } = {},
): Promise<{ result: PromiseSettledResult<T>; elapsedMs: number }> {
  const stepMs = options.stepMs ?? 250;
  const maxMs = options.maxMs ?? 120_000;
  const start = clock.now();
  let result: PromiseSettledResult<T> | undefined;
  let elapsedMs = 0;
  void work.then(
    (value) => void ((result = { status: 'fulfilled', value }), (elapsedMs = clock.now() - start)),
    (reason: unknown) => void ((result = { status: 'rejected', reason }), (elapsedMs = clock.now() - start)),
  );
  for (let i = 0; i < 4; i++) await new Promise((r) => setTimeout(r, 5));
  while (!result && clock.now() - start < maxMs) {
    clock.advance(stepMs);
    for (let i = 0; i < 3 && !result; i++) await new Promise((r) => setTimeout(r, 3));
  }
  if (!result) throw new Error(`nothing settled within ${maxMs} ms of clock time`);
  return { result, elapsedMs };
}
