import { assertNever } from '../../shared/assert-never.ts';
import type { Reply } from './chat-messages.ts';
import type { Metrics } from './metrics.ts';
import { HttpProblem } from './problem.ts';

export const PROBE_PATHS = ['/healthz', '/readyz', '/metrics'] as const;
export type ProbePath = (typeof PROBE_PATHS)[number];

export const isProbePath = (path: string): path is ProbePath => (PROBE_PATHS as readonly string[]).includes(path);

/**
 * Whether this node can serve chat messages now: null when it can, else why not (one line). On
 * SQLite the database is a file of this process, so a running server is ready; a PostgreSQL node
 * asks its database (store/pg/readiness.ts).
 */
export type Readiness = () => Promise<string | null>;

/**
 * The three GET paths a load balancer or Prometheus reads. /healthz is liveness, as the protocol
 * says: the process answers (restart it when it does not). /readyz is readiness: it can also
 * reach its database, so a balancer sends chat messages elsewhere while this node cannot.
 */
export async function probeReply(path: ProbePath, deps: { metrics: Metrics; ready?: Readiness }): Promise<Reply | HttpProblem> {
  switch (path) {
    case '/healthz':
      return { status: 200, body: { status: 'ok' } };
    case '/metrics':
      return { status: 200, text: deps.metrics.render() };
    case '/readyz': {
      const notReady = deps.ready ? await deps.ready() : null;
      if (notReady === null) return { status: 200, body: { status: 'ready' } };
      return new HttpProblem('service_unavailable', `not ready: ${notReady}`, { headers: { 'retry-after': '5' } });
    }
    default:
      return assertNever(path, 'probe path');
  }
}
