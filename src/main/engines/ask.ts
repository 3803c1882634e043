import type { Clock } from '../../shared/clock.ts';
import type { Engine, EngineAnswer, EngineRequest } from './engine.ts';

export class EngineTimeout extends Error {}

/** Asks an engine, giving up (and aborting it) after `timeoutMs` of the injected clock. */
export async function askEngine(engine: Engine, request: EngineRequest, timeoutMs: number, clock: Clock): Promise<EngineAnswer> {
  const controller = new AbortController();
  let cancelTimer = (): void => {};
  const timeout = new Promise<never>((_, reject) => {
    cancelTimer = clock.after(timeoutMs, () => {
      controller.abort();
      reject(new EngineTimeout(`engine ${engine.name} did not answer within ${timeoutMs} ms`));
    });
  });
  try {
    return await Promise.race([engine.answer(request, controller.signal), timeout]);
  } finally {
    cancelTimer();
  }
}
