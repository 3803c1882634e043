import type { Clock } from '../../shared/clock.ts';
import type { Readiness } from './probes.ts';

export interface PgReadinessOptions {
  /** An answer is reused this long: a balancer checking every node every second costs one query a second. */
  cacheMs?: number;
  /** A database that does not answer within this is as good as down for a request. */
  timeoutMs?: number;
}

/**
 * /readyz on a PostgreSQL node (issue 30): ready while `SELECT 1` on its pool answers within
 * timeoutMs. A node cut off from the database (its network, its pool used up, the server down)
 * is then taken out of a balancer's rotation, where /healthz would keep it in because the
 * process itself is fine. Checks that arrive together share one query.
 */
export function createPgReadiness(db: { query(sql: string): Promise<unknown> }, clock: Clock, options: PgReadinessOptions = {}): Readiness {
  const cacheMs = options.cacheMs ?? 1000;
  const timeoutMs = options.timeoutMs ?? 2000;
  let last: { at: number; answer: string | null } | null = null;
  let pending: Promise<string | null> | null = null;

  const check = (): Promise<string | null> =>
    new Promise<string | null>((resolve) => {
      const cancel = clock.after(timeoutMs, () => resolve(`the database did not answer within ${timeoutMs} ms`));
      db.query('SELECT 1').then(
        () => (cancel(), resolve(null)),
        (error: unknown) => (cancel(), resolve(`the database cannot be reached: ${(error as Error).message}`)),
      );
    });

  return () => {
    if (last && clock.now() - last.at < cacheMs) return Promise.resolve(last.answer);
    pending ??= check().then((answer) => {
      last = { at: clock.now(), answer };
      pending = null;
      return answer;
    });
    return pending;
  };
}
