import type { StoreContract } from '../store/contract.ts';
import type { InTransaction } from '../store/in-transaction.ts';
import type { ConsoleReads } from '../store/console-reads.ts';
import type { Reads } from '../store/worker-reader.ts';
import type { MessageWriter } from '../conversations/message-service.ts';
import type { ActiveClient } from '../auth/client-registry.ts';
import type { SecretBox } from '../auth/secret-box.ts';
import type { Engine } from '../engines/engine.ts';
import type { Clock } from '../../shared/clock.ts';
import type { ConsoleHandlers } from '../../shared/console-api.ts';
import type { EventBus } from './events.ts';
import { createConsoleHandlers } from './handlers.ts';
import { createConsoleAssist } from './console-assist.ts';
import { createAdminHandlers } from './admin-handlers.ts';
import { createWorkspaceHandlers } from './workspace-handlers.ts';
import { createDeliveryHandlers } from './delivery-handlers.ts';
import { auditDetail } from '../conversations/workspace-commands.ts';
import { clientAdmin } from '../auth/client-admin.ts';
import type { ConsoleAccounts } from '../accounts/console-accounts.ts';
import { createAccountHandlers } from './account-handlers.ts';
import { createTeamHandlers } from './team-handlers.ts';
import { createLearnHandlers } from './learn-handlers.ts';
import type { Team } from '../team/team-service.ts';
import type { Proposer } from '../learn/proposer.ts';
import { createReplayHandlers } from './replay-handlers.ts';
import { createKbThresholdHandlers } from './kb-threshold-handlers.ts';
import type { KnowledgeSource } from '../engines/kb-engine.ts';
import type { PendingChanges } from '../replay/candidate.ts';

export interface AllHandlerDeps {
  /** Either store: every call is awaited (issue 30). */
  store: StoreContract;
  /** Several calls as one transaction, on `store`'s database. */
  inTransaction: InTransaction;
  /** Sessions and sign-out (team mode). */
  consoleAccounts: ConsoleAccounts;
  /** Where sign-in links point (serve's console address); null or absent in the desktop app. */
  consoleOrigin?: () => string | null;
  /** Online, away or offline, from the team workflow's presence (the agents view). */
  presenceOf?: (agentId: string) => 'online' | 'away' | 'offline';
  /** The heavy reads: on the read thread, or in-process with config.readWorker off. */
  reads: Reads<ConsoleReads>;
  writer: MessageWriter;
  clock: Clock;
  events: EventBus;
  engine: Engine;
  box: SecretBox;
  lookupClient: (clientId: string) => ActiveClient | undefined;
  /** This process changed clients: the registry must not wait for its next check. */
  invalidateClients: () => void;
  endpoint: () => string;
  retryDelivery: (id: number) => Promise<boolean>;
  notifyOutbox: () => void;
  deliveryTrying: (id: number) => boolean;
  /** An undone stop put customer messages back to pending: the reply scheduler takes them up. */
  onReplyScheduled: (conversationId: string, clientId: string, receivedAt: number) => void;
  outboxDepth: () => Array<[number, number]>;
  engineTimeoutMs: number;
  fallbackText: string;
  contextLines: number;
  /** The team workflow's live side (presence, auto-assignment, who hears of what). */
  team: Team;
  /** Proposes knowledge-base changes from operators' replies (absent: nothing is proposed). */
  learn?: Pick<Proposer, 'afterReply'>;
  /** The built-in engine's threshold now (set from the console, else the server's kbThreshold). */
  kbThreshold: () => number;
  /** The server's configured kbThreshold: what "back to the default" returns to. */
  configuredKbThreshold: number;
  /** Pending knowledge-base proposals for replays; absent in a build without a proposals store. */
  pendingChanges?: PendingChanges;
  /** This node's id when several nodes share the store (PostgreSQL): replay runs are the installation's, not the process's. */
  replayNodeId?: string;
  /** The knowledge base as the built-in engine matches it: the threshold plot ranks with it. */
  knowledge: KnowledgeSource;
}

/** Every console method, from its parts: conversations, the agent's workspace, deliveries, administration. */
export function createAllConsoleHandlers(deps: AllHandlerDeps): ConsoleHandlers {
  const { store, writer, clock } = deps;
  const clientStore = { clients: store.clients, engines: store.engines, inTransaction: deps.inTransaction };
  return {
    ...createConsoleHandlers({
      ...deps,
      assist: createConsoleAssist({ ...deps }),
    }),
    ...createWorkspaceHandlers({ ...deps, ownerChanged: () => deps.consoleAccounts.refreshOwner() }),
    ...createDeliveryHandlers(deps),
    ...createAccountHandlers(deps),
    ...createTeamHandlers(deps),
    ...createLearnHandlers(deps),
    ...createReplayHandlers(deps),
    ...createKbThresholdHandlers(deps),
    ...createAdminHandlers({
      ...deps,
      admin: clientAdmin(clientStore, deps.box),
      auditClientChange: async (caller, detail) => {
        const entry = { at: clock.now(), operator: caller.account, action: 'client_settings' as const, conversationId: null, detail: auditDetail(detail) };
        await writer.submit({ kind: 'audit', entry });
      },
    }),
  };
}
