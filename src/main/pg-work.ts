import type pg from 'pg';
import type { Clock } from '../shared/clock.ts';
import type { ConsoleEvent } from '../shared/console-api.ts';
import type { ServerConfig } from './config/server-config.ts';
import type { ActiveClient } from './auth/client-registry.ts';
import type { Engine } from './engines/engine.ts';
import type { EventBus } from './console-api/events.ts';
import type { createMetrics } from './http/metrics.ts';
import { replyLeaseMsFor } from './store/pg/leases/pg-leases.ts';
import { createSender, type Resolver } from './delivery/sender.ts';
import { createPgOutbox } from './delivery/pg-outbox.ts';
import { createPgReplyWorker } from './autoreply/pg-reply-worker.ts';

type AlertReason = Extract<ConsoleEvent, { type: 'alert' }>['reason'];

export interface PgWorkDeps {
  config: ServerConfig;
  pool: pg.Pool;
  clock: Clock;
  nodeId: string;
  engine: Engine;
  lookupClient: (clientId: string) => ActiveClient | undefined;
  metrics: ReturnType<typeof createMetrics>;
  events: EventBus;
  /** A conversation needs a person (bound late: the console's team workflow starts after these). */
  needsHuman: (conversationId: string, reason: AlertReason) => void;
  resolve?: Resolver;
  random?: () => number;
  log: (line: string) => void;
}

/**
 * The work a PostgreSQL node takes from the shared tables under leases: auto replies whose quiet
 * period ended and deliveries due, whichever node stored the message.
 */
export function createPgWork(d: PgWorkDeps) {
  const { config, pool, clock, nodeId, lookupClient, metrics, events, log } = d;
  const sender = createSender({ resolve: d.resolve, timeoutMs: config.deliveryTimeoutMs, maxSockets: config.deliveryConcurrency });
  const outbox = createPgOutbox({
    pool,
    send: sender,
    clock,
    nodeId,
    lookupClient,
    concurrency: config.deliveryConcurrency,
    perClient: config.deliveryConcurrencyPerClient,
    perOrigin: config.deliveryConcurrencyPerOrigin,
    random: d.random,
    ...(config.deliveryLeaseSeconds !== undefined ? { leaseMs: config.deliveryLeaseSeconds * 1000 } : {}),
    onAttempt: (verdict, conversationId) => {
      metrics.deliveryAttempt(verdict);
      events.emit({ type: 'delivery', conversationId, state: verdict });
    },
    onAlert: (conversationId, reason) => d.needsHuman(conversationId, reason),
    log,
  });
  const replies = createPgReplyWorker({
    pool,
    engine: d.engine,
    clock,
    nodeId,
    lookupClient,
    engineTimeoutMs: config.engineTimeoutMs,
    contextLines: 50,
    // Outlives the engine's longest call with room for the commit (store/pg/leases/pg-leases.ts).
    leaseMs: config.replyLeaseSeconds !== undefined ? config.replyLeaseSeconds * 1000 : replyLeaseMsFor(config.engineTimeoutMs),
    onDelivery: () => outbox.notify(),
    onChange: (conversationId) => events.emit({ type: 'conversation', conversationId }),
    onAlert: (conversationId, reason) => d.needsHuman(conversationId, reason),
    log,
  });
  return { sender, outbox, replies };
}
