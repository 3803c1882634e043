import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../shared/clock.ts';
import { BUILTIN_ENGINE } from '../shared/engine-config.ts';
import type { ServerConfig } from './config/server-config.ts';
import type { SecretBox } from './auth/secret-box.ts';
import { createClientRegistry } from './auth/client-registry.ts';
import { startReplayPruning } from './auth/pg-replay-pruning.ts';
import { createRateLimiter } from './auth/rate-limiter.ts';
import { createAddressLimiter, createPreAuthGate } from './auth/address-limiter.ts';
import { openPgPool } from './store/pg/pool.ts';
import { migratePgAtStart } from './store/pg/migrate-at-start.ts';
import { createConfigMirror } from './store/pg/config-mirror.ts';
import { restoreDueReplies } from './store/pg/reply-queries.ts';
import type { Engine } from './engines/engine.ts';
import { createPgEngine } from './pg-engine.ts';
import { createMessageService } from './conversations/message-service.ts';
import { countedPgRunner, pgEndpointReads } from './conversations/pg-endpoint-writes.ts';
import { startPgMaintenance } from './conversations/pg-maintenance.ts';
import { createPgChatMessagesHandler } from './http/pg-chat-messages.ts';
import { createPgReadiness } from './http/pg-readiness.ts';
import { createHttpServer, CHAT_PATH, listen } from './http/server.ts';
import { createMetrics, eventLoopDelayGauges, monitorLoopDelay } from './http/metrics.ts';
import { createRequestLogger } from './http/request-logger.ts';
import { createIntakeBudget } from './http/intake-budget.ts';
import type { Resolver } from './delivery/sender.ts';
import { createPgWork } from './pg-work.ts';
import { createTurnSlicer, INGEST_TURN_BUDGET_MS } from './loop/turn-slicer.ts';
import { nextTurn, quiesce, type BusyPart, type QuiesceOptions } from './loop/quiesce.ts';
import { createEventBus, type EventBus } from './console-api/events.ts';
import { sharedConsoleTokenAtStart, type ConsoleTokenAtStart } from './console-api/console-token.ts';
import type { Keyring } from './auth/secret-box.ts';
import type { ConsoleAccounts } from './accounts/console-accounts.ts';
import type { ConsoleEvent, ConsoleHandlers } from '../shared/console-api.ts';
import { startPgConsole } from './pg-console.ts';
import { pgStore } from './store/pg/pg-store.ts';
import { pgConsoleTokenQueries } from './store/pg/console-token-queries.ts';

export interface PgServiceOptions {
  config: ServerConfig;
  /** postgres://… (the --store flag, SWITCHBOARD_STORE or the config's `store`). */
  storeUrl: string;
  /** Opens client secrets and engine keys: the key every node shares. */
  secretBox: SecretBox;
  clock?: Clock;
  engine?: Engine;
  log?: (line: string) => void;
  resolve?: Resolver;
  random?: () => number;
  /** This node's name in leases and pg_stat_activity; default: host, process id and a random suffix. */
  nodeId?: string;
  /** Connections this node keeps to PostgreSQL (default 10). */
  poolMax?: number;
  /** The console's address as others open it (serve), for sign-in links. */
  consoleOrigin?: () => string | null;
}

export interface RunningPgService {
  endpointUrl: string;
  port: number;
  host: string;
  nodeId: string;
  /** The sealed values this node must open with its key (serve's check at start). */
  sealedValues(): Array<{ label: string; sealed: string }>;
  /** What a console listener on this node serves: the same handlers and events as SQLite's service. */
  console: { handlers: ConsoleHandlers; events: EventBus; accounts: ConsoleAccounts };
  /** The console token every node derives from the shared key (the first node to start stores its salt). */
  consoleTokenAtStart(key: Keyring): Promise<ConsoleTokenAtStart>;
  /** As RunningService.quiesce: resolves once nothing set in motion is still running on this node. */
  quiesce(options?: QuiesceOptions): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A node of a Switchboard that keeps its data in PostgreSQL (issue 30): the integrator's endpoint,
 * the quiet-period auto replies and the outbox, any number of them on one database. It holds no
 * state another node needs: a request may reach any node, a node may die, and what it had
 * claimed (a reply due, a delivery) is taken over by another once its lease runs out.
 */
export async function startPgService(options: PgServiceOptions): Promise<RunningPgService> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? ((line: string) => console.error(line));
  const nodeId = options.nodeId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const pool = openPgPool(options.storeUrl, {
    max: options.poolMax ?? 10,
    ...(options.config.storeQueryTimeoutMs !== undefined ? { queryTimeoutMs: options.config.storeQueryTimeoutMs } : {}),
    applicationName: `switchboard ${nodeId}`.slice(0, 63),
    onIdleError: (error) => log(`PostgreSQL: an idle connection failed: ${error.message}`),
  });
  const closers: Array<() => Promise<void> | void> = [() => pool.end()];
  const closeAll = async (): Promise<void> => {
    for (const close of closers.splice(0).reverse()) await close();
  };
  try {
    await migratePgAtStart(options.storeUrl, nodeId, log);
    const mirror = createConfigMirror(pool, log);
    await mirror.refresh();
    mirror.start();
    closers.push(() => mirror.stop());
    return await serve(options, { clock, log, nodeId, pool, mirror, closers, closeAll });
  } catch (error) {
    await closeAll();
    throw error;
  }
}

interface Parts {
  clock: Clock;
  log: (line: string) => void;
  nodeId: string;
  pool: ReturnType<typeof openPgPool>;
  mirror: ReturnType<typeof createConfigMirror>;
  closers: Array<() => Promise<void> | void>;
  closeAll(): Promise<void>;
}

async function serve(options: PgServiceOptions, { clock, log, nodeId, pool, mirror, closers, closeAll }: Parts): Promise<RunningPgService> {
  const { config } = options;
  const box = options.secretBox;
  const registry = createClientRegistry(mirror, box, log);
  const lookupClient = (clientId: string) => registry.lookup(clientId, clock.now());
  const replayWindowMs = config.replayWindowSeconds * 1000;
  closers.push(startReplayPruning(pool, clock, replayWindowMs, log));
  const { engine, knowledge, threshold, close: closeEngine } = createPgEngine({
    pool,
    mirror,
    box,
    clock,
    log,
    kbThreshold: config.kbThreshold,
    engineOf: (clientId) => lookupClient(clientId)?.settings.engine ?? BUILTIN_ENGINE,
    ...(options.engine ? { engine: options.engine } : {}),
  });
  // Its background vector refresh stops before the pool closes (closers run in reverse).
  closers.push(closeEngine);

  const metrics = createMetrics();
  const events = createEventBus();
  const changed = (conversationId: string): void => events.emit({ type: 'conversation', conversationId });
  // Bound once the console's team workflow is up (after the endpoint listens); nothing alerts before.
  let needsHuman: (conversationId: string, reason: Extract<ConsoleEvent, { type: 'alert' }>['reason']) => void = () => {};
  let customerWaits: (conversationId: string) => void = () => {};
  const commands = countedPgRunner(pool, replayWindowMs);
  const submit = commands.submit;
  const reads = pgEndpointReads(pool);
  const slicer = createTurnSlicer({ onError: (error) => log(`sliced task failed: ${(error as Error).message}`) });
  const ingestSlicer = createTurnSlicer({ budgetMs: INGEST_TURN_BUDGET_MS, onError: (error) => log(`sliced request failed: ${(error as Error).message}`) });
  const { sender, outbox, replies } = createPgWork({
    config,
    pool,
    clock,
    nodeId,
    engine,
    lookupClient,
    metrics,
    events,
    needsHuman: (conversationId, reason) => needsHuman(conversationId, reason),
    resolve: options.resolve,
    random: options.random,
    log,
  });
  closers.push(() => sender.close());
  const service = createMessageService(reads, { submit }, engine, clock, {
    engineTimeoutMs: config.engineTimeoutMs,
    defaultFallbackText: config.fallbackText,
    contextLines: 50,
    onStored: (eventType, conversationId) => {
      metrics.messageStored(eventType);
      changed(conversationId);
    },
    // The timer is a row written with the message; this node looks for due work now rather than at its next poll.
    onReplyScheduled: () => replies.notify(),
    onAlert: (conversationId, reason) => needsHuman(conversationId, reason),
    onWaitsOnStaff: (conversationId) => customerWaits(conversationId),
  });
  const requestLog = createRequestLogger(config.requestLogAggregation, (command) => {
    submit(command).catch((error: unknown) => log(`request log write failed: ${(error as Error).message}`));
  });
  const intake = createIntakeBudget(config.intake);
  const http = createHttpServer({
    ready: createPgReadiness(pool, clock),
    chatMessages: createPgChatMessagesHandler({
      registry,
      mirror,
      service,
      rateLimiter: createRateLimiter(config.rateLimit),
      clock,
      timestampToleranceSeconds: config.timestampToleranceSeconds,
      db: pool,
      replayWindowMs,
    }),
    metrics,
    clock,
    bodyLimitBytes: config.bodyLimitBytes,
    slicer: ingestSlicer,
    preAuthGate: createPreAuthGate(createAddressLimiter(config.addressRateLimit)),
    intake,
    logRequest: (entry, authenticated) => {
      // A refusal that was only counted changes no row the console shows until the next flush.
      if (requestLog.log(entry, authenticated)) events.emit({ type: 'request', status: entry.status, code: entry.code });
    },
    logError: (error, requestId) => log(`request ${requestId} failed: ${(error as Error).stack ?? String(error)}`),
    logInfo: log,
  });
  metrics.gauge('switchboard_http_in_flight', 'Requests being processed.', () => http.inFlight());
  metrics.gauge('switchboard_ingest_queued', 'Chat messages read and waiting for their turn on the main thread.', () => ingestSlicer.pending());
  metrics.gauge('switchboard_pg_pool_waiting', 'Queries waiting for a PostgreSQL connection on this node.', () => pool.waitingCount);
  metrics.gauge('switchboard_pg_pool_connections', 'Connections this node holds to PostgreSQL.', () => pool.totalCount);
  const loopDelay = monitorLoopDelay(10);
  eventLoopDelayGauges(metrics, loopDelay);
  closers.push(() => loopDelay.stop());
  const flushTimer = setInterval(() => {
    const counted = requestLog.flush(clock.now());
    if (counted) events.emit({ type: 'request', ...counted });
  }, 1000);
  flushTimer.unref();

  // Known once the endpoint listens (its port may be 0).
  let endpointUrl = '';
  const consolePart = await startPgConsole({
    config,
    pool,
    storeUrl: options.storeUrl,
    nodeId,
    clock,
    log,
    box,
    events,
    engine,
    knowledge,
    lookupClient,
    mirror,
    kbThreshold: threshold,
    outbox,
    replies,
    endpoint: () => endpointUrl,
    consoleOrigin: options.consoleOrigin ?? (() => null),
  });
  needsHuman = consolePart.needsHuman;
  customerWaits = consolePart.customerWaits;
  closers.push(() => consolePart.stop());
  await listen(http.server, config.port, config.host).catch(async (error: unknown) => {
    clearInterval(flushTimer);
    await closeAll();
    throw error;
  });
  const restored = await restoreDueReplies(pool, clock.now());
  if (restored > 0) log(`auto replies: ${restored} conversation(s) waiting for a reply with no timer set (a copied database): answered now`);
  replies.start();
  outbox.start();
  const maintenance = startPgMaintenance({ pool, clock, config, log });
  const address = http.server.address() as AddressInfo;
  const hostInUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  endpointUrl = `http://${hostInUrl}:${address.port}${CHAT_PATH}`;

  const busyParts: BusyPart[] = [
    { name: 'requests in flight', busy: () => http.inFlight() + ingestSlicer.pending(), settled: () => (http.inFlight() > 0 ? http.requestEnded() : nextTurn()) },
    { name: 'commands in their transaction', busy: () => commands.running(), settled: () => commands.ended() },
    { name: 'timers due on the clock', busy: () => clock.due?.() ?? 0, settled: () => new Promise((r) => setTimeout(r, 0)) },
    { name: 'sliced work queued', busy: () => slicer.pending() },
    { name: 'replies being made', busy: () => replies.firing(), settled: () => replies.fireEnded() },
    { name: 'delivery attempts in flight', busy: () => outbox.busy(), settled: () => (outbox.inFlight() > 0 ? outbox.attemptEnded() : nextTurn()) },
    { name: 'pruning', busy: () => maintenance.busy(), settled: () => maintenance.settled() },
    ...consolePart.busyParts,
  ];

  let stopped: Promise<void> | null = null;
  return {
    endpointUrl,
    port: address.port,
    host: address.address,
    nodeId,
    sealedValues: () => mirror.sealedValues(),
    console: { handlers: consolePart.handlers, events, accounts: consolePart.accounts },
    async consoleTokenAtStart(key) {
      const atStart = await sharedConsoleTokenAtStart({ ...pgStore(pool).settings, putIfAbsent: pgConsoleTokenQueries(pool).putIfAbsent }, key);
      // The token check reads the mirror's settings: it must hold the record stored just now.
      await mirror.refresh();
      return atStart;
    },
    quiesce: (q) => quiesce(busyParts, q),
    stop() {
      stopped ??= (async () => {
        clearInterval(flushTimer);
        await maintenance.stop();
        await http.close();
        requestLog.flush(clock.now(), true);
        await replies.stop();
        await outbox.stop();
        // The last request-log writes and lease releases before the pool closes.
        while (commands.running() > 0) await commands.ended();
        await closeAll();
      })();
      return stopped;
    },
  };
}
