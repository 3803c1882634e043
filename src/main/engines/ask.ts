import type { Clock } from '../../shared/clock.ts';
import type { Engine, EngineAnswer, EngineRequest } from './engine.ts';

/** The caller's overall budget ran out before the engine answered. */
export class EngineTimeout extends Error {
  /** The engine that did not answer in time (the routed one, not "router"). */
  readonly engine: string;
  constructor(engine: string, message: string) {
    super(message);
    this.engine = engine;
  }
}

/**
 * Asks an engine, giving up (and aborting it) after `timeoutMs` of the injected clock. The engine
 * is told the budget, so its own retries and waits end inside it.
 */
export async function askEngine(engine: Engine, request: EngineRequest, timeoutMs: number, clock: Clock): Promise<EngineAnswer> {
  const controller = new AbortController();
  const name = engine.nameFor?.(request) ?? engine.name;
  let cancelTimer = (): void => {};
  const timeout = new Promise<never>((_, reject) => {
    cancelTimer = clock.after(timeoutMs, () => {
      controller.abort();
      reject(new EngineTimeout(name, `engine ${name} timed out: no answer within ${timeoutMs} ms`));
    });
  });
  try {
    return await Promise.race([engine.answer({ ...request, budget: { clock, endsAt: clock.now() + timeoutMs } }, controller.signal), timeout]);
  } finally {
    cancelTimer();
  }
}
