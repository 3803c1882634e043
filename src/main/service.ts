import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../shared/clock.ts';
import { openDatabase, databaseFiles, WRITER_WAL_AUTOCHECKPOINT_PAGES } from './store/db.ts';
import { databasePath, permissionWarning, secretKeyPath } from './store/data-dir.ts';
import { createStore, type Store } from './store/index.ts';
import { startWorkerWriter } from './store/worker-writer.ts';
import { inProcessReads, startReadWorker } from './store/worker-reader.ts';
import { consoleReads } from './store/console-reads.ts';
import { sqliteInTransaction } from './store/in-transaction.ts';
import { keyFileBox, type SecretBox } from './auth/secret-box.ts';
import { createClientRegistry } from './auth/client-registry.ts';
import { createReplayGuard } from './auth/replay-guard.ts';
import { createRateLimiter } from './auth/rate-limiter.ts';
import { createAddressLimiter, createPreAuthGate } from './auth/address-limiter.ts';
import { createIndexedKnowledge } from './engines/kb-index.ts';
import { thresholdSource } from './engines/kb-threshold.ts';
import type { Engine } from './engines/engine.ts';
import { configuredEngineLoader, createServiceEngine } from './engines/service-engine.ts';
import { startWorkerEngine } from './engines/worker-engine.ts';
import { createSemantic } from './engines/embeddings/semantic.ts';
import type { KbVectorsWrite } from './engines/embeddings/entry-vectors.ts';
import { BUILTIN_ENGINE } from '../shared/engine-config.ts';
import { createMessageService } from './conversations/message-service.ts';
import type { WriteCommand, WriteResult } from './conversations/write-commands.ts';
import { startMaintenance } from './conversations/maintenance.ts';
import { createChatMessagesHandler } from './http/chat-messages.ts';
import { createHttpServer, CHAT_PATH, listen } from './http/server.ts';
import { createMetrics, eventLoopDelayGauges, monitorLoopDelay } from './http/metrics.ts';
import { createRequestLogger } from './http/request-logger.ts';
import type { ServerConfig } from './config/server-config.ts';
import { createSender, type Resolver } from './delivery/sender.ts';
import { createOutbox } from './delivery/outbox.ts';
import { createReplyScheduler } from './autoreply/reply-scheduler.ts';
import { createTurnSlicer, INGEST_TURN_BUDGET_MS } from './loop/turn-slicer.ts';
import { nextTurn, quiesce, type BusyPart, type QuiesceOptions } from './loop/quiesce.ts';
import { createStaffWaitWatch, staffWatchSince } from './conversations/staff-wait.ts';
import { createEventBus, type EventBus } from './console-api/events.ts';
import { createAlerts } from './console-api/alerts.ts';
import { createAllConsoleHandlers } from './console-api/console-handlers.ts';
import { createProposer } from './learn/proposer.ts';
import { createConsoleAccounts, type ConsoleAccounts } from './accounts/console-accounts.ts';
import { createTokenCheck } from './console-api/console-token.ts';
import { ownerCaller } from './console-api/operator-guard.ts';
import { boundTo, type OwnerHandlers } from './console-api/bound-handlers.ts';
import type { ConsoleHandlers } from '../shared/console-api.ts';
import { createIntakeBudget } from './http/intake-budget.ts';
import { createTeam, type Team } from './team/team-service.ts';

export interface ServiceOptions {
  config: ServerConfig;
  dataDir: string;
  clock?: Clock;
  secretBox?: SecretBox;
  engine?: Engine;
  log?: (line: string) => void;
  /** The writer thread's entry: the .ts source when run by Node, the bundled .js in Electron. */
  writerEntry?: URL | string;
  /** The engine thread's entry, like `writerEntry`; used when config.engineWorker is on. */
  engineWorkerEntry?: URL | string;
  /** The console read thread's entry, like `writerEntry`; used when config.readWorker is on. */
  readerEntry?: URL | string;
  /** DNS for deliveries (tests point names at forbidden addresses). */
  resolve?: Resolver;
  /** Jitter source for retry delays (tests make it deterministic). */
  random?: () => number;
  /** Time source of the per-turn budget of due replies and delivery starts (tests count turns). */
  turnClock?: () => number;
  /** The console's address as others open it (serve), for sign-in links; absent in the desktop app. */
  consoleOrigin?: () => string | null;
}

export interface RunningService {
  endpointUrl: string;
  port: number;
  host: string;
  store: Store;
  outbox: { notify(): void; inFlight(): number };
  /** What the console (IPC or HTTP) calls, and the live events it listens to. */
  console: {
    handlers: ConsoleHandlers;
    events: EventBus;
    /** Who a bearer token is (owner or agent session), sign-in and revocation: the console listener's and the handlers' one instance. */
    accounts: ConsoleAccounts;
    /** The handlers called as the installation's owner (the desktop window's caller), for in-process callers and tests. */
    asOwner: OwnerHandlers;
    /** The team workflow's live side: presence, auto-assignment, routing of alerts (team mode). */
    team: Team;
  };
  /** Sends a dead delivery again with a fresh retry schedule, or one waiting for a retry now; false otherwise. */
  retryDelivery(id: number): Promise<boolean>;
  /**
   * Resolves once everything already set in motion has finished: no request in flight, every
   * write submitted so far committed, no reply being made (engine call, commit) or queued to be,
   * no delivery attempt taken and not yet recorded (so its receiver has had the request), no
   * pruning pass running, and no timer due on the clock that has not run (a manual clock's).
   * Timers still in the clock's future are not waited for: tests move the clock, then quiesce.
   * For tests and tools ("nothing happened" is then a fact, not a sleep); it waits on events and
   * costs the service nothing while nobody calls it. Fails, naming what is still busy, after
   * `timeoutMs` (10 s): a held engine or receiver never lets it resolve.
   */
  quiesce(options?: QuiesceOptions): Promise<void>;
  stop(): Promise<void>;
}



/** Wires the message service: store, auth, engine, HTTP. Both entry points start it this way. */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const log = options.log ?? ((line: string) => console.error(line));
  const db = openDatabase(databasePath(options.dataDir));
  const store = createStore(db);
  const writer = await startWorkerWriter<WriteCommand, WriteResult>(
    options.writerEntry ?? new URL('./writer-worker.ts', import.meta.url),
    { databasePath: databasePath(options.dataDir), busyTimeoutMs: config.busyTimeoutMs },
    (message) => log(`background write failed: ${message}`),
  );
  // The console's heavy reads (search, lists, transcripts, dashboard) off the thread that serves ingest.
  const reader = config.readWorker
    ? await startReadWorker(
        options.readerEntry ?? new URL('./reader-worker.ts', import.meta.url),
        { databasePath: databasePath(options.dataDir), busyTimeoutMs: config.busyTimeoutMs },
        consoleReads(store),
        log,
      )
    : { reads: inProcessReads(consoleReads(store)), close: async () => {} };
  const box = options.secretBox ?? keyFileBox(secretKeyPath(options.dataDir));
  // Once per start, after this process created what was missing (owner-only): what is left is the operator's.
  const looseWarning = permissionWarning(options.dataDir, [...databaseFiles(databasePath(options.dataDir)), secretKeyPath(options.dataDir)]);
  if (looseWarning) log(looseWarning);
  const registry = createClientRegistry(store, box, log);
  const replay = createReplayGuard(config.replayWindowSeconds * 1000);
  replay.load(store.idempotency.signaturesSince(clock.now() - config.replayWindowSeconds * 1000));
  const metrics = createMetrics();
  const events = createEventBus();
  // Team mode routes each alert (its assignee, auto-assignment, the queue's watchers); alone, every console gets it.
  const team = createTeam({ store, writer, clock, events, config: config.team, raise: createAlerts(store, events), log });
  const alert = team.needsHuman;
  const stopWatchingStreams = events.watchStreams((agentId) => team.streamOpened(agentId));
  const loadEngine = configuredEngineLoader(store.engines, box);
  const engineOf = (clientId: string): string => registry.lookup(clientId, clock.now())?.settings.engine ?? BUILTIN_ENGINE;
  const saveVectors = (write: KbVectorsWrite): void => writer.send({ kind: 'kb_vectors', write, now: clock.now() });
  // Injected engines (tests' scripted ones) answer in-process; otherwise the engine thread does.
  const engineWorker = options.engine || !config.engineWorker
    ? null
    : await startWorkerEngine(
        options.engineWorkerEntry ?? new URL('./engine-worker.ts', import.meta.url),
        { databasePath: databasePath(options.dataDir), busyTimeoutMs: config.busyTimeoutMs, kbThreshold: config.kbThreshold },
        { engineOf, load: loadEngine, saveVectors, log },
      );
  // The same in-memory match as the engine thread's, so both paths answer alike.
  const knowledge = createIndexedKnowledge(store.kb);
  const semantic = options.engine || engineWorker ? null : createSemantic({ knowledge, access: { entries: () => store.kb.all(), version: () => store.kb.version(), stored: (model) => store.kbVectors.forModel(model), save: saveVectors }, clock, log });
  const kbThreshold = thresholdSource(store.settings, config.kbThreshold);
  const engine: Engine = options.engine ?? engineWorker ?? createServiceEngine({ knowledge, threshold: kbThreshold, semantic, engineOf, load: loadEngine });
  const lookupClient = (clientId: string) => registry.lookup(clientId, clock.now());
  // One budget per turn for both bursts: due replies and delivery starts share the loop's time.
  const slicer = createTurnSlicer({ now: options.turnClock, onError: (error) => log(`sliced task failed: ${(error as Error).message}`) });
  // Ingest has its own, larger budget: each turn handles up to INGEST_TURN_BUDGET_MS of chat
  // messages and up to the default 2 ms of replies and deliveries, as when ingest ran in the poll.
  const ingestSlicer = createTurnSlicer({ now: options.turnClock, budgetMs: INGEST_TURN_BUDGET_MS, onError: (error) => log(`sliced request failed: ${(error as Error).message}`) });
  const sender = createSender({ resolve: options.resolve, timeoutMs: config.deliveryTimeoutMs, maxSockets: config.deliveryConcurrency });
  const outbox = createOutbox({
    store,
    writer,
    send: sender,
    clock,
    lookupClient,
    concurrency: config.deliveryConcurrency,
    perClient: config.deliveryConcurrencyPerClient,
    perOrigin: config.deliveryConcurrencyPerOrigin,
    pollMs: 1000,
    slicer,
    random: options.random,
    onAttempt: (verdict, conversationId) => {
      metrics.deliveryAttempt(verdict);
      events.emit({ type: 'delivery', conversationId, state: verdict });
    },
    onAlert: (conversationId, reason) => alert(conversationId, reason),
    log,
  });
  const scheduler = createReplyScheduler({
    store,
    writer,
    engine,
    clock,
    lookupClient,
    engineTimeoutMs: config.engineTimeoutMs,
    contextLines: 50,
    slicer,
    onDelivery: () => outbox.notify(),
    onChange: (conversationId) => events.emit({ type: 'conversation', conversationId }),
    onAlert: alert,
    log,
  });
  const staffWait = createStaffWaitWatch({
    writer,
    clock,
    waitMs: config.staffWaitMinutes * 60_000,
    watchingSince: await staffWatchSince(store.settings, clock.now(), config.staffWaitMinutes > 0),
    waiting: (since) => store.staffWait.waiting(since),
    onAlert: (conversationId) => alert(conversationId, 'staff_silent'),
    log,
  });
  const service = createMessageService(store, writer, engine, clock, {
    engineTimeoutMs: config.engineTimeoutMs,
    defaultFallbackText: config.fallbackText,
    contextLines: 50,
    onStored: (eventType, conversationId) => {
      metrics.messageStored(eventType);
      events.emit({ type: 'conversation', conversationId });
    },
    onReplyScheduled: (conversationId, clientId, at) => scheduler.add(conversationId, clientId, at),
    onAlert: alert,
    onWaitsOnStaff: (conversationId) => staffWait.customerWrote(conversationId),
  });
  const requestLog = createRequestLogger(config.requestLogAggregation, (command) => writer.send(command));
  const intake = createIntakeBudget(config.intake);
  const http = createHttpServer({
    chatMessages: createChatMessagesHandler({
      registry,
      replay,
      rateLimiter: createRateLimiter(config.rateLimit),
      service,
      clock,
      timestampToleranceSeconds: config.timestampToleranceSeconds,
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
  metrics.gauge('switchboard_intake_bytes', 'Body bytes reserved by requests not yet authenticated (the intake budget in use).', () => intake.held());
  metrics.gauge('switchboard_ingest_queued', 'Chat messages read and waiting for their turn on the main thread.', () => ingestSlicer.pending());
  metrics.gauge('switchboard_db_writes_pending', 'Writes handed to the writer thread and not yet committed.', () => writer.pending());
  metrics.gauge('switchboard_db_commit_batches', 'Group-commit transactions since start.', () => writer.stats.batches);
  metrics.gauge('switchboard_db_largest_batch', 'Most writes that shared one commit.', () => writer.stats.largestBatch);
  metrics.histogram(
    'switchboard_db_commit_duration_seconds',
    `Each committed group transaction's COMMIT on the writer thread: the WAL's fsync, and a checkpoint into the database file once the WAL holds ${WRITER_WAL_AUTOCHECKPOINT_PAGES} frames or more.`,
    () => writer.stats.commitSeconds,
  );
  metrics.gauge('switchboard_http_in_flight', 'Requests being processed.', () => http.inFlight());
  metrics.gauge('switchboard_outbox_pending', 'Deliveries waiting to be sent (outbox depth).', () => store.deliveries.countByState().pending);
  metrics.gauge('switchboard_outbox_dead', 'Deliveries that gave up; retry them from the console or CLI.', () => store.deliveries.countByState().dead);
  metrics.gauge('switchboard_replies_waiting', 'Conversations in their quiet period.', () => scheduler.waitingConversations());
  // A 10 ms tick, as monitorEventLoopDelay's default resolution.
  const loopDelay = monitorLoopDelay(10);
  eventLoopDelayGauges(metrics, loopDelay);

  const flushTimer = setInterval(() => {
    const counted = requestLog.flush(clock.now());
    if (counted) events.emit({ type: 'request', ...counted });
  }, 1000);
  flushTimer.unref();

  const maintenance = startMaintenance({ store, writer, clock, config, log });

  try {
    await listen(http.server, config.port, config.host);
  } catch (error) {
    clearInterval(flushTimer);
    await maintenance.stop();
    await engineWorker?.close();
    await reader.close();
    await writer.close();
    store.close();
    throw error;
  }
  scheduler.restore();
  outbox.start();
  await staffWait.start();
  let endpointUrl = '';
  // The outbox depth over time, for the dashboard: a sample every 15 s, the last 6 hours.
  const depth: Array<[number, number]> = [];
  const sampleDepth = (): void => {
    depth.push([Math.floor(clock.now() / 1000), store.deliveries.countByState().pending]);
    if (depth.length > 1440) depth.shift();
  };
  sampleDepth();
  const depthTimer = setInterval(sampleDepth, 15_000);
  depthTimer.unref();
  const consoleAccounts = createConsoleAccounts({
    accounts: store.accounts,
    clock,
    verifyToken: createTokenCheck(store.settings, clock),
    audit: (entry) => void writer.submit({ kind: 'audit', entry }).catch((error: unknown) => log(`audit of ${entry.action} failed: ${String(error)}`)),
  });
  const inTransaction = sqliteInTransaction(store);
  const learn = createProposer({ store, inTransaction, events, log });
  const consoleHandlers = createAllConsoleHandlers({
    learn,
    consoleAccounts,
    consoleOrigin: options.consoleOrigin,
    store,
    inTransaction,
    reads: reader.reads,
    writer,
    clock,
    events,
    engine,
    box,
    lookupClient,
    invalidateClients: () => registry.invalidate(),
    endpoint: () => endpointUrl,
    retryDelivery: (id) => retryDelivery(id),
    notifyOutbox: () => outbox.notify(),
    deliveryTrying: (id) => outbox.trying(id),
    onReplyScheduled: (conversationId, clientId, at) => scheduler.add(conversationId, clientId, at),
    outboxDepth: () => depth,
    engineTimeoutMs: config.engineTimeoutMs,
    fallbackText: config.fallbackText,
    contextLines: 50,
    kbThreshold,
    configuredKbThreshold: config.kbThreshold,
    pendingChanges: () => store.proposals.pendingChanges(),
    knowledge,
    team,
    presenceOf: (agentId) => team.presenceOf(agentId),
  });
  team.start();
  async function retryDelivery(id: number): Promise<boolean> {
    const result = await writer.submit({ kind: 'delivery_retry', deliveryId: id, now: clock.now() });
    const changed = result?.kind === 'changed' && result.count > 0;
    if (changed) outbox.notify();
    return changed;
  }
  const address = http.server.address() as AddressInfo;
  const hostInUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  endpointUrl = `http://${hostInUrl}:${address.port}${CHAT_PATH}`;

  // What `quiesce` waits on, in the order a piece of work moves through them.
  const busyParts: BusyPart[] = [
    { name: 'requests in flight', busy: () => http.inFlight() + ingestSlicer.pending(), settled: () => (http.inFlight() > 0 ? http.requestEnded() : nextTurn()) },
    { name: 'writes not committed', busy: () => writer.pending(), settled: () => writer.drain() },
    { name: 'timers due on the clock', busy: () => clock.due?.() ?? 0, settled: () => new Promise((r) => setTimeout(r, 0)) },
    { name: 'replies and delivery starts queued', busy: () => slicer.pending() },
    { name: 'replies being made', busy: () => scheduler.firing(), settled: () => scheduler.fireEnded() },
    { name: 'delivery attempts in flight', busy: () => outbox.busy(), settled: () => (outbox.inFlight() > 0 ? outbox.attemptEnded() : nextTurn()) },
    { name: 'pruning', busy: () => maintenance.busy(), settled: () => maintenance.settled() },
    { name: 'team work (auto-assignment, returns to the queue)', busy: () => team.busy(), settled: () => team.settled() },
    { name: 'knowledge-base proposals from replies', busy: () => learn.busy(), settled: () => learn.settled() },
  ];

  let stopped: Promise<void> | null = null;
  return {
    endpointUrl,
    port: address.port,
    host: address.address,
    store,
    outbox,
    console: { handlers: consoleHandlers, events, accounts: consoleAccounts, asOwner: boundTo(consoleHandlers, () => ownerCaller(store.accounts, null)), team },
    retryDelivery,
    quiesce: (options) => quiesce(busyParts, options),
    stop() {
      stopped ??= (async () => {
        clearInterval(flushTimer);
        clearInterval(depthTimer);
        await maintenance.stop();
        await http.close();
        requestLog.flush(clock.now(), true);
        scheduler.stop();
        staffWait.stop();
        team.stop();
        stopWatchingStreams();
        loopDelay.stop();
        await outbox.stop();
        sender.close();
        await engineWorker?.close();
        semantic?.close();
        await reader.close();
        await writer.close();
        store.close();
      })();
      return stopped;
    },
  };
}
