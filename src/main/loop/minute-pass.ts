import type { Clock } from '../../shared/clock.ts';

const MINUTE = 60_000;

export interface MinutePass {
  /** 1 while a pass runs (and a pass asked for meanwhile); for `quiesce`. */
  busy(): number;
  /** Resolves when the pass running now has ended. */
  settled(): Promise<void>;
  /** No more passes; resolves once the one running has ended (it sees `stopping()` and cuts short). */
  stop(): Promise<void>;
}

/**
 * Runs `pass` once at start (unless `atStart` is false) and then once a minute on the injected
 * clock, one at a time (the stores' pruning: maintenance.ts, pg-maintenance.ts; PostgreSQL's
 * staff-wait sweep, pg-staff-wait-sweep.ts). A minute that comes while a pass runs is
 * run after it with `rerun` (the rows it was meant for may have come since), else skipped. A
 * failed pass is logged; the next minute tries again.
 */
export function startMinutePass(o: {
  clock: Clock;
  pass: (stopping: () => boolean) => Promise<void>;
  rerun: boolean;
  log: (line: string) => void;
  atStart?: boolean;
}): MinutePass {
  let running: Promise<void> | null = null;
  let stopping = false;
  let again = false;
  const isStopping = (): boolean => stopping;
  const run = (): void => {
    if (running) {
      again = o.rerun;
      return;
    }
    running = o
      .pass(isStopping)
      .catch((error: unknown) => o.log(`pruning failed: ${(error as Error).message}`))
      .finally(() => {
        running = null;
        if (again && !stopping) {
          again = false;
          run();
        }
      });
  };
  let cancel = (): void => {};
  const schedule = (): void => {
    cancel = o.clock.after(MINUTE, () => {
      run();
      schedule();
    });
  };
  if (o.atStart !== false) run();
  schedule();
  return {
    busy: () => (running ? 1 : 0),
    settled: async () => {
      await running;
    },
    async stop() {
      stopping = true;
      cancel();
      await running;
    },
  };
}
