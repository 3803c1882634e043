import { MAX_DELAY_MS } from './event-stream.ts';

/**
 * How long the console waits on the service before it says so. A test may set
 * `window.switchboardTiming` before the page loads (page.addInitScript) to shorten them; a real
 * console never sets it.
 */
interface TimingOverrides {
  streamSilenceMs?: number;
  loadTimeoutMs?: number;
  reconnectMaxMs?: number;
}

declare global {
  interface Window {
    switchboardTiming?: TimingOverrides;
  }
}

/** The console listener writes ": ping" on /api/events every 15 s (src/main/console-api/console-server.ts). */
export const SERVER_PING_MS = 15_000;

/** Two pings missed, and a margin for a busy machine: the stream (or the service) is gone. */
export const STREAM_SILENCE_MS = 2 * SERVER_PING_MS + 5_000;

/** Opening a conversation that has not answered by then shows an error with Retry, not an endless spinner. */
export const LOAD_TIMEOUT_MS = 20_000;

const override = (value: unknown, fallback: number): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback);

export function streamSilenceMs(): number {
  return override(globalThis.window?.switchboardTiming?.streamSilenceMs, STREAM_SILENCE_MS);
}

/** The event stream's longest wait between reconnects (it doubles from 0.5 s up to this). */
export function reconnectMaxMs(): number {
  return override(globalThis.window?.switchboardTiming?.reconnectMaxMs, MAX_DELAY_MS);
}

export function loadTimeoutMs(): number {
  return override(globalThis.window?.switchboardTiming?.loadTimeoutMs, LOAD_TIMEOUT_MS);
}

/** The answer, or `timedOut()` once `ms` passed without one (the request itself is left to finish unseen). */
export function withTimeout<T>(work: Promise<T>, ms: number, timedOut: () => T): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(timedOut()), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
