/** Section 7's retry rules as pure functions. */

/** Waits after the first try, then after each retry; past the last one the delivery is dead. */
export const RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const;
export const JITTER = 0.2;
export const RETRY_AFTER_MAX_MS = 3_600_000;
export const ATTEMPT_TIMEOUT_MS = 15_000;

export type SendResult =
  | { kind: 'response'; status: number; retryAfter: string | null }
  | { kind: 'error'; error: string; permanent: boolean };

export type Verdict = 'sent' | 'retry' | 'dead';

/** Any 2xx is success; 3xx (not followed), 408, 429 and 5xx are retried; other 4xx are final. */
export function classify(result: SendResult): Verdict {
  if (result.kind === 'error') return result.permanent ? 'dead' : 'retry';
  const s = result.status;
  if (s >= 200 && s < 300) return 'sent';
  if ((s >= 300 && s < 400) || s === 408 || s === 429 || s >= 500) return 'retry';
  return 'dead';
}

/** Retry-After as seconds or an HTTP date; null when absent, unreadable or over an hour. */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return null;
    ms = Math.max(0, at - now);
  }
  return ms <= RETRY_AFTER_MAX_MS ? ms : null;
}

/**
 * Delay before the next attempt after `attemptsInRound` failed ones, or null when the schedule
 * is used up. A usable Retry-After replaces the scheduled wait; otherwise ±20 % jitter spreads
 * retries so a receiver coming back is not hit by every delivery at once.
 */
export function nextDelay(attemptsInRound: number, retryAfterMs: number | null, random: () => number = Math.random): number | null {
  const base = RETRY_SCHEDULE_MS[attemptsInRound - 1];
  if (base === undefined) return null;
  if (retryAfterMs !== null) return retryAfterMs;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}
