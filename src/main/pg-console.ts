import pg from 'pg';
import type { Clock } from '../shared/clock.ts';
import type { ServerConfig } from './config/server-config.ts';
import type { SecretBox } from './auth/secret-box.ts';
import type { ActiveClient } from './auth/client-registry.ts';
import type { Engine } from './engines/engine.ts';
import type { KnowledgeSource } from './engines/kb-engine.ts';
import { pgStore, pgInTransaction } from './store/pg/pg-store.ts';
import { inProcessReads } from './store/worker-reader.ts';
import { consoleReads } from './store/console-reads.ts';
import { createPgWriter } from './conversations/pg-writer.ts';
import { createStaffWaitWatch, staffWatchSince } from './conversations/staff-wait.ts';
import { startPgStaffWaitSweep } from './conversations/pg-staff-wait-sweep.ts';
import type { EventBus } from './console-api/events.ts';
import { createAlerts } from './console-api/alerts.ts';
import { createAllConsoleHandlers } from './console-api/console-handlers.ts';
import { createTokenCheck } from './console-api/console-token.ts';
import { startPgEventRelay } from './console-api/pg-event-relay.ts';
import { createConsoleAccounts } from './accounts/console-accounts.ts';
import { createProposer } from './learn/proposer.ts';
import { createTeam } from './team/team-service.ts';
import { createRemotePresence, PRESENCE_REPEAT_MS } from './team/remote-presence.ts';
import type { BusyPart } from './loop/quiesce.ts';

export interface PgConsoleDeps {
  config: ServerConfig;
  pool: pg.Pool;
  /** For the events relay's own connection (LISTEN holds it; not from the pool). */
  storeUrl: string;
  nodeId: string;
  clock: Clock;
  log: (line: string) => void;
  box: SecretBox;
  /** This node's console events: the endpoint, replies and deliveries emit on it too. */
  events: EventBus;
  engine: Engine;
  knowledge: KnowledgeSource;
  lookupClient: (clientId: string) => ActiveClient | undefined;
  /** The clients, settings and knowledge base as this node mirrors them (read again every second). */
  mirror: { settings: { get(key: string): string | undefined }; refresh(): Promise<void> };
  kbThreshold: () => number;
  outbox: { notify(): void; trying(id: number): boolean };
  replies: { notify(): void };
  endpoint: () => string;
  consoleOrigin: () => string | null;
}

/**
 * The console's server side on a PostgreSQL node (issue 30): the same handlers as SQLite's
 * service, on the store contract's PostgreSQL implementation, its commands in transactions of
 * their own (pg-writer.ts). Live events cross nodes over LISTEN/NOTIFY (pg-event-relay.ts), and
 * with them presence: each node tells the others who is online on its consoles, so the team's
 * auto-assignment and returns to the queue see every agent, whichever node their console uses.
 */
export async function startPgConsole(d: PgConsoleDeps) {
  const { pool, clock, log, events, config } = d;
  const store = pgStore(pool);
  const inTransaction = pgInTransaction(pool);
  const writer = createPgWriter({ pool, storeOf: pgStore, settingsOf: (id) => d.lookupClient(id)?.settings, log });
  const relay = startPgEventRelay({
    newClient: () => new pg.Client({ connectionString: d.storeUrl, keepAlive: true, application_name: `switchboard ${d.nodeId} events`.slice(0, 63) }),
    nodeId: d.nodeId,
    bus: events,
    log,
    clock,
    // A node that just started (or whose link came back) hears at once who is online here, not at the next repeat.
    onHello: () => sayPresence(),
  });
  const remote = createRemotePresence({ clock });
  const stopHearing = events.onDeliver((event, from) => {
    if (event.type === 'presence') remote.heard(from, event.agentId, event.presence);
  });
  const team = createTeam({ store, writer, clock, events, config: config.team, raise: createAlerts(store, events), log, remote });
  const stopWatchingStreams = events.watchStreams((agentId) => team.streamOpened(agentId));
  // Said again while it holds, so the other nodes' copies (90 s) never run out for a live console.
  function sayPresence(): void {
    for (const p of team.present()) relay.publish({ type: 'presence', agentId: p.agentId, presence: p.presence });
  }
  const repeatPresence = setInterval(sayPresence, PRESENCE_REPEAT_MS);
  repeatPresence.unref();
  const staffWait = createStaffWaitWatch({
    writer,
    clock,
    waitMs: config.staffWaitMinutes * 60_000,
    watchingSince: await staffWatchSince(store.settings, clock.now(), config.staffWaitMinutes > 0),
    waiting: (since) => store.staffWait.waiting(since),
    onAlert: (conversationId) => team.needsHuman(conversationId, 'staff_silent'),
    log,
  });
  const consoleAccounts = createConsoleAccounts({
    accounts: store.accounts,
    clock,
    // The mirror's copy of the settings: a token rotated on another node or by the CLI is seen within a second.
    verifyToken: createTokenCheck(d.mirror.settings, clock),
    audit: (entry) => writer.send({ kind: 'audit', entry }),
  });
  const learn = createProposer({ store, inTransaction, events, log });
  // The outbox depth over time, for the dashboard: a sample every 15 s, the last 6 hours (of the whole installation).
  const depth: Array<[number, number]> = [];
  const sampleDepth = (): void => {
    Promise.resolve(store.deliveries.countByState()).then(
      (counts) => {
        depth.push([Math.floor(clock.now() / 1000), counts.pending]);
        if (depth.length > 1440) depth.shift();
      },
      (error: unknown) => log(`console: sampling the outbox depth failed: ${(error as Error).message}`),
    );
  };
  sampleDepth();
  const depthTimer = setInterval(sampleDepth, 15_000);
  depthTimer.unref();
  const retryDelivery = async (id: number): Promise<boolean> => {
    const result = await writer.submit({ kind: 'delivery_retry', deliveryId: id, now: clock.now() });
    const changed = result?.kind === 'changed' && result.count > 0;
    if (changed) d.outbox.notify();
    return changed;
  };
  const handlers = createAllConsoleHandlers({
    learn,
    consoleAccounts,
    consoleOrigin: d.consoleOrigin,
    store,
    inTransaction,
    reads: inProcessReads(consoleReads(store)),
    writer,
    clock,
    events,
    engine: d.engine,
    box: d.box,
    lookupClient: d.lookupClient,
    invalidateClients: () => void d.mirror.refresh().catch((error: unknown) => log(`clients: reading them again failed: ${(error as Error).message}`)),
    endpoint: d.endpoint,
    retryDelivery,
    notifyOutbox: () => d.outbox.notify(),
    // This node's own tries only: another node's try in flight is not known here (its claim keeps it from being sent twice).
    deliveryTrying: (id) => d.outbox.trying(id),
    // An undone stop set the conversation's timer row in its own transaction (pg-writer.ts): look for it now.
    onReplyScheduled: () => d.replies.notify(),
    outboxDepth: () => depth,
    engineTimeoutMs: config.engineTimeoutMs,
    fallbackText: config.fallbackText,
    contextLines: 50,
    kbThreshold: d.kbThreshold,
    configuredKbThreshold: config.kbThreshold,
    pendingChanges: () => store.proposals.pendingChanges(),
    // Replay runs are claimed, shown and cancelled across the nodes (replay-runs.ts).
    replayNodeId: d.nodeId,
    knowledge: d.knowledge,
    team,
    presenceOf: (agentId) => team.presenceOf(agentId),
  });
  team.start();
  await staffWait.start();
  // The timers above are this node's; a wait whose node died is found by some node's sweep within a minute.
  const staffWaitSweep = startPgStaffWaitSweep({ pool, clock, sweep: (stopping) => staffWait.sweep(stopping), log });
  const busyParts: BusyPart[] = [
    { name: 'staff-wait sweep', busy: () => staffWaitSweep.busy(), settled: () => staffWaitSweep.settled() },
    { name: 'console commands in their transaction', busy: () => writer.pending(), settled: () => writer.drain() },
    { name: 'team work (auto-assignment, returns to the queue)', busy: () => team.busy(), settled: () => team.settled() },
    { name: 'knowledge-base proposals from replies', busy: () => learn.busy(), settled: () => learn.settled() },
  ];
  return {
    handlers,
    accounts: consoleAccounts,
    team,
    relay,
    /** What ingest, replies and deliveries call when a conversation needs a human, or waits on staff. */
    needsHuman: team.needsHuman,
    customerWaits: (conversationId: string) => staffWait.customerWrote(conversationId),
    busyParts,
    async stop(): Promise<void> {
      clearInterval(repeatPresence);
      clearInterval(depthTimer);
      await staffWaitSweep.stop();
      staffWait.stop();
      team.stop();
      stopWatchingStreams();
      stopHearing();
      await writer.close();
      await relay.close();
    },
  };
}

export type PgConsole = Awaited<ReturnType<typeof startPgConsole>>;
