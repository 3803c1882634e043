/**
 * A POST that waits for the endpoint to start listening. The quick start runs `serve &` and then
 * `send`; pasted at once, send reached the port while serve was still building the console and
 * failed with ECONNREFUSED. A refused connection never reached a server, so trying again cannot
 * send a message twice; any other failure (a reset, a time-out, an HTTP error) is answered at once.
 */

export interface WaitOptions {
  /** How long to keep trying a refused connection; 0 tries once. */
  waitMs: number;
  /** Time for one attempt to be answered, once connected. */
  answerTimeoutMs: number;
  /** Called once, at the first refusal, when a wait follows. */
  onWaiting: () => void;
  nowMs?: () => number;
  retryEveryMs?: number;
}

/** The endpoint refused every connection for the whole wait: nothing listens there. */
export class NotListeningError extends Error {
  readonly waitedMs: number;
  readonly refusal: string;
  constructor(waitedMs: number, refusal: string) {
    super(refusal);
    this.waitedMs = waitedMs;
    this.refusal = refusal;
  }
}

function refused(error: unknown): string | null {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code === 'ECONNREFUSED' ? (cause.message ?? 'ECONNREFUSED') : null;
}

export async function postWhenListening(url: string, init: RequestInit, options: WaitOptions): Promise<Response> {
  const now = options.nowMs ?? (() => performance.now());
  const started = now();
  let announced = false;
  for (;;) {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(options.answerTimeoutMs) });
    } catch (error) {
      const refusal = refused(error);
      if (refusal === null) throw error;
      const waited = now() - started;
      if (waited >= options.waitMs) throw new NotListeningError(waited, refusal);
      if (!announced) {
        announced = true;
        options.onWaiting();
      }
      const pause = Math.min(options.retryEveryMs ?? 200, options.waitMs - waited);
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
