import type { StoreContract } from '../store/contract.ts';
import type { ConsoleReads } from '../store/console-reads.ts';
import type { Reads } from '../store/worker-reader.ts';
import type { MessageWriter } from '../conversations/message-service.ts';
import type { ActiveClient } from '../auth/client-registry.ts';
import type { Clock } from '../../shared/clock.ts';
import type { ApiResult, ConsoleHandlers, ConsoleMethod, ConsoleOutputs, Operator, RequestLogItem } from '../../shared/console-api.ts';
import { consoleInputs } from '../../shared/console-api.ts';
import type { EventBus } from './events.ts';
import { ConsoleError } from './console-error.ts';
import { requireOperator } from './operator-guard.ts';
import { sendTargetOf } from '../delivery/operator-delivery.ts';
import { mayCall, type Caller } from '../../shared/console-roles.ts';
import { readerOf } from './reader.ts';

export { ConsoleError };

export interface HandlerDeps {
  store: Pick<StoreContract, 'accounts' | 'console'>;
  /** The heavy reads, awaited: on the read thread, or in-process with config.readWorker off. */
  reads: Reads<ConsoleReads>;
  writer: MessageWriter;
  clock: Clock;
  events: EventBus;
  endpoint: () => string;
  lookupClient: (clientId: string) => ActiveClient | undefined;
  /** Wakes the outbox for deliveries made due again (an undone stop). */
  notifyOutbox: () => void;
  /** Customer messages pending again (an undone stop): the reply scheduler's own entry, as at ingest. */
  onReplyScheduled: (conversationId: string, clientId: string, receivedAt: number) => void;
  /** Outbox depth samples, oldest first (kept in memory by the service). */
  outboxDepth: () => Array<[number, number]>;
  /** A suggestion for the conversation's latest customer message (console-assist.ts). */
  assist: (conversationId: string, instruction: string | undefined, operator: Operator) => Promise<ConsoleOutputs['assist']>;
}

/** The conversation side of the console API; createAdminHandlers adds clients and the knowledge base. */
export function createConsoleHandlers(deps: HandlerDeps) {
  const { store, reads, clock } = deps;

  async function setState(caller: Caller, kind: 'console_stop' | 'console_resume', conversationId: string, undoStop = false) {
    const operator = requireOperator(caller);
    const result = await deps.writer.submit(kind === 'console_resume' ? { kind, conversationId, operator, now: clock.now(), undoStop } : { kind, conversationId, operator, now: clock.now() });
    if (result?.kind !== 'auto_reply_state') throw new ConsoleError('not_found', `no conversation ${conversationId}`);
    deps.events.emit({ type: 'conversation', conversationId });
    return result;
  }

  return {
    async status() {
      return { endpoint: deps.endpoint(), version: '0.1.0' };
    },
    async listConversations(input, caller) {
      return reads.conversations({ ...input, now: clock.now(), reader: await readerOf(store.accounts, caller) });
    },
    async getTranscript(input, caller) {
      const page = await reads.transcriptPage(input.conversationId, input.limit, input.beforeId, await readerOf(store.accounts, caller));
      if (!page) throw new ConsoleError('not_found', `no conversation ${input.conversationId}`);
      const { conversation, entries, hasEarlier, latestAutoSendUrl } = page;
      const client = deps.lookupClient(conversation.clientId);
      const mediaOrigins = client?.settings.mediaOrigins ?? [];
      const sendTarget = sendTargetOf(conversation, client?.settings, latestAutoSendUrl);
      return { conversation, entries, hasEarlier, mediaOrigins, sendTarget };
    },
    async getMessageInfo(input) {
      const found = await reads.messageInfo(input.messageId);
      if (!found) throw new ConsoleError('not_found', `no message ${input.messageId}`);
      return { messageId: input.messageId, ...found };
    },
    async stats(input) {
      const nowMinute = Math.floor(clock.now() / 60_000);
      const minutes = Array.from({ length: input.minutes }, (_, i) => nowMinute - input.minutes + 1 + i);
      const { series, deliveries: counts, needsHuman } = await reads.dashboard(minutes[0]! * 60_000);
      const pick = (m: Map<number, number>): number[] => minutes.map((minute) => m.get(minute) ?? 0);
      return {
        minutes: minutes.map((m) => m * 60),
        requests: pick(series.requests),
        rejected: pick(series.rejected),
        replies: pick(series.replies),
        handoffs: pick(series.handoffs),
        deliveryFailures: pick(series.deliveryFailures),
        outboxDepth: deps.outboxDepth(),
        now: { pending: counts.pending, dead: counts.dead, needsHuman },
      };
    },
    async getConversations(input, caller) {
      return reads.conversationsByIds(input.ids, await readerOf(store.accounts, caller));
    },
    async stopAutoReply(input, caller) {
      const r = await setState(caller, 'console_stop', input.conversationId);
      return { previous: r.previous === 'none' ? 'active' : r.previous, cancelledReplies: r.cancelledReplies };
    },
    async resumeAutoReply(input, caller) {
      const r = await setState(caller, 'console_resume', input.conversationId, input.undoStop);
      const restoredReplies = r.restoredReplies ?? 0;
      if (restoredReplies > 0) deps.notifyOutbox();
      // Each message at its own arrival: the quiet period is the one the stop interrupted (over: at once).
      const again = r.rescheduled;
      if (again) for (const at of again.receivedAt) deps.onReplyScheduled(input.conversationId, again.clientId, at);
      return { previous: r.previous === 'none' ? 'active' : r.previous, restoredReplies, ...(r.undo ? { undo: r.undo } : {}) };
    },
    async listRequests(input) {
      const { rows, labels } = await reads.requestLog(input);
      return rows.map(
        (r): RequestLogItem => ({
          id: r.id,
          at: r.at,
          requestId: r.requestId,
          verified: r.verified,
          clientId: r.clientId,
          claimedClientId: r.claimedClientId,
          eventType: r.eventType,
          msgId: r.msgId,
          status: r.status,
          code: r.code,
          latencyMs: r.latencyMs,
          problem: r.problem ? (JSON.parse(r.problem) as Record<string, unknown>) : null,
          conversationId: r.conversationId,
          conversation: r.conversationId ? (labels[r.conversationId] ?? null) : null,
          count: r.count,
          lastAt: r.lastAt,
        }),
      );
    },
    async assist(input, caller) {
      const operator = requireOperator(caller);
      if (!(await store.console.conversation(input.conversationId))) throw new ConsoleError('not_found', `no conversation ${input.conversationId}`);
      const result = await deps.assist(input.conversationId, input.instruction, operator);
      deps.events.emit({ type: 'conversation', conversationId: input.conversationId });
      return result;
    },
  } satisfies Partial<ConsoleHandlers>;
}


/** The one entry for IPC and HTTP: the caller's role checked, input checked with the contract's schema, errors as data. */
export async function dispatch(handlers: ConsoleHandlers, method: string, rawInput: unknown, caller: Caller, log: (line: string) => void = (line) => console.error(line)): Promise<ApiResult<unknown>> {
  if (!Object.hasOwn(consoleInputs, method)) return { ok: false, error: { code: 'unknown_method', message: `no console method "${method}"` } };
  const m = method as ConsoleMethod;
  if (!mayCall(caller.role, m)) return { ok: false, error: { code: 'forbidden', message: `only an admin may do this ("${method}"); you are signed in as an ${caller.role}` } };
  const parsed = consoleInputs[m].safeParse(rawInput ?? {});
  if (!parsed.success) {
    return { ok: false, error: { code: 'invalid_input', message: parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ') } };
  }
  try {
    const handler = handlers[m] as (input: unknown, caller: Caller) => Promise<unknown>;
    return { ok: true, value: await handler(parsed.data, caller) };
  } catch (error) {
    if (error instanceof ConsoleError) return { ok: false, error: { code: error.code, message: error.message, ...(error.arrived ? { arrived: error.arrived } : {}) } };
    // The answer says it has been logged: it is, with the method and who called it.
    log(`console: ${method} by ${caller.account?.id ?? (caller.owner ? 'the owner' : 'nobody')} failed: ${(error as Error).stack ?? String(error)}`);
    return { ok: false, error: { code: 'internal_error', message: 'the service failed to do this; it has been logged' } };
  }
}
