import type { ServerResponse } from 'node:http';

/** What a fake API answers one call with: status, JSON body (or raw text), headers, after a delay. */
export interface CannedAnswer {
  status?: number;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  delayMs?: number;
}

/**
 * Sends `answer` after its delay. The pending timer is kept in `timers` so the fake's close() can
 * clear it: a "hung" model is a long delay, and nothing may linger after a test.
 */
export function answerLater(res: ServerResponse, answer: CannedAnswer, timers: Set<NodeJS.Timeout>): void {
  const timer = setTimeout(() => {
    timers.delete(timer);
    if (res.destroyed) return;
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
    res.end(answer.raw ?? JSON.stringify(answer.body ?? {}));
  }, answer.delayMs ?? 0);
  timers.add(timer);
}
