import type { StoreContract } from '../store/contract.ts';
import { checkBase } from './conflict.ts';
import type { ConsoleReads } from '../store/console-reads.ts';
import type { Reads } from '../store/worker-reader.ts';
import type { MessageWriter } from '../conversations/message-service.ts';
import type { ActiveClient } from '../auth/client-registry.ts';
import type { SecretBox } from '../auth/secret-box.ts';
import type { Clock } from '../../shared/clock.ts';
import type { CannedReply, ConsoleHandlers } from '../../shared/console-api.ts';
import type { EventBus } from './events.ts';
import type { AnsweredMessage } from '../store/workspace-queries.ts';
import { ConsoleError } from './console-error.ts';
import { requireOperator } from './operator-guard.ts';
import { operatorDeliveryInfo, sendTargetOf } from '../delivery/operator-delivery.ts';
import { newId } from '../store/ids.ts';
import { sendTestMessage, TEST_RESOLVER } from './test-message.ts';
import { readerOf } from './reader.ts';
import { conflictMessage } from './conflict.ts';
import type { Team } from '../team/team-service.ts';
import type { Proposer } from '../learn/proposer.ts';

export interface WorkspaceDeps {
  store: Pick<StoreContract, 'accounts' | 'conversations' | 'canned' | 'workspace' | 'team' | 'clients' | 'console'>;
  /** The owner chose or changed their id or name: what filters their open consoles' events reads it again. */
  ownerChanged?: () => Promise<void>;
  /** The heavy reads (deliveries, audit), awaited: see HandlerDeps. */
  reads: Reads<ConsoleReads>;
  writer: MessageWriter;
  clock: Clock;
  events: EventBus;
  lookupClient: (clientId: string) => ActiveClient | undefined;
  /** Opens client secrets, for the test message (the secret never leaves this process). */
  box: SecretBox;
  endpoint: () => string;
  notifyOutbox: () => void;
  /** Team mode (a reply takes an unassigned conversation), and the cue that a slot or the queue changed. */
  team: Pick<Team, 'teamMode' | 'changed'>;
  /** Learning from the team: told of each reply once it is stored (it proposes knowledge-base changes off the reply's path). */
  learn?: Pick<Proposer, 'afterReply'>;
}

type WorkspaceMethods =
  | 'getOperator'
  | 'setOperator'
  | 'sendReply'
  | 'resolveConversation'
  | 'undoResolve'
  | 'flagConversation'
  | 'markRead'
  | 'listCanned'
  | 'saveCanned'
  | 'removeCanned'
  | 'listAudit'
  | 'sendTestMessage';

/** The agent's workspace: who they are, answering and resolving, canned replies, the audit (deliveries: delivery-handlers.ts). */
export function createWorkspaceHandlers(deps: WorkspaceDeps): Pick<ConsoleHandlers, WorkspaceMethods> {
  const { store, clock } = deps;
  const conversation = async (id: string) => {
    const conv = await store.conversations.byId(id);
    if (!conv) throw new ConsoleError('not_found', `no conversation ${id}`);
    return conv;
  };
  const canned = async (id: number): Promise<CannedReply> => {
    const c = await store.canned.get(id);
    if (!c) throw new ConsoleError('not_found', `no canned reply ${id}`);
    return c;
  };

  return {
    async getOperator(_input, caller) {
      return caller.account;
    },
    async setOperator(input, caller) {
      // An agent's id is their account's: only the name is theirs to change.
      if (!caller.owner && input.id !== caller.account?.id) throw new ConsoleError('invalid_input', `id: your account id is ${caller.account?.id ?? '(none)'}; only your display name can change`);
      // Ignoring case, as agent ids are compared everywhere (sign-in, mentions, the CLI).
      const other = (await store.accounts.list()).find((a) => !a.owner && a.id.toLowerCase() === input.id.toLowerCase());
      if (caller.owner && other) throw new ConsoleError('id_taken', `id: ${input.id} is ${other.id === input.id ? '' : `too close to ${other.id}, `}another agent's account; choose another id`);
      // The address rides with the operator into the audit row, as requireOperator's does.
      await deps.writer.submit({ kind: 'set_operator', operator: { ...input, address: caller.address }, owner: caller.owner, now: clock.now() });
      if (caller.owner) await deps.ownerChanged?.();
      return input;
    },
    async sendReply(input, caller) {
      const operator = requireOperator(caller);
      const conv = await conversation(input.conversationId);
      const client = deps.lookupClient(conv.clientId);
      const target = sendTargetOf(conv, client?.settings, conv.channel === 'im' ? await store.workspace.latestAutoSendUrl(conv.id) : null);
      if (!target.ok || !client) throw new ConsoleError('no_send_url', target.ok ? `client ${conv.clientId} no longer exists` : target.reason);
      let answered: AnsweredMessage[];
      if (input.replyTo) {
        answered = [];
        for (const msgId of new Set(input.replyTo)) {
          const m = await store.workspace.customerMessage(conv.id, msgId);
          if (!m) throw new ConsoleError('invalid_input', `replyTo: ${msgId} is not a customer message of this conversation`);
          answered.push(m);
        }
      } else {
        answered = await store.workspace.unanswered(conv.id, 100);
      }
      const asker = answered.at(-1)?.fromUserId ?? (await store.workspace.latestCustomerMessage(conv.id))?.fromUserId ?? null;
      const now = clock.now();
      const replyMsgId = newId('reply');
      const replyTo = answered.map((m) => m.msgId);
      const info = operatorDeliveryInfo({ replyMsgId, conversation: conv, settings: client.settings, replyTo, asker, content: input.content, operator, now });
      checkBase({ messageId: await store.workspace.latestMessageId(conv.id), replyId: await store.team.latestReplyId(conv.id) }, input.base);
      const result = await deps.writer.submit({
        kind: 'operator_reply',
        conversationId: conv.id,
        clientId: conv.clientId,
        operator,
        replyMsgId,
        content: input.content,
        replyTo,
        sendUrl: target.url,
        messageInfo: JSON.stringify(info),
        pauseMs: client.settings.pauseMinutes * 60_000,
        base: input.base ?? null,
        force: input.force ?? false,
        takeIfFree: await deps.team.teamMode(),
        now,
      });
      // Nothing was stored or sent: the console shows what arrived and asks before sending anyway.
      if (result?.kind === 'conversation_changed') throw new ConsoleError('conversation_changed', conflictMessage(result.arrived, 'reply'), { arrived: result.arrived });
      if (result?.kind !== 'operator_reply') throw new ConsoleError('not_found', `no conversation ${conv.id}`);
      deps.notifyOutbox();
      deps.events.emit({ type: 'conversation', conversationId: conv.id });
      deps.team.changed();
      deps.learn?.afterReply({ conversationId: conv.id, clientId: conv.clientId, replyMsgId, content: input.content, operator, answered, neededHuman: conv.needsHuman, now });
      return { msgId: replyMsgId, deliveryId: result.deliveryId };
    },
    async resolveConversation(input, caller) {
      const operator = requireOperator(caller);
      const result = await deps.writer.submit({ kind: 'resolve', conversationId: input.conversationId, operator, now: clock.now() });
      if (result?.kind !== 'resolved') throw new ConsoleError('not_found', `no conversation ${input.conversationId}`);
      deps.events.emit({ type: 'conversation', conversationId: input.conversationId });
      deps.team.changed();
      return { resolvedAt: result.resolvedAt, resolvedBy: { id: operator.id, name: operator.name }, undoable: result.undoable };
    },
    async undoResolve(input, caller) {
      const operator = requireOperator(caller);
      const result = await deps.writer.submit({ kind: 'undo_resolve', conversationId: input.conversationId, resolvedAt: input.resolvedAt, operator, now: clock.now() });
      // Checked and refused inside the write's transaction: nothing can slip in between.
      if (result?.kind === 'undo_refused') throw new ConsoleError(`undo_${result.reason}`, result.message);
      if (result?.kind !== 'resolve_undone') throw new ConsoleError('not_found', `no conversation ${input.conversationId}`);
      deps.events.emit({ type: 'conversation', conversationId: input.conversationId });
      deps.team.changed();
      return { needsHumanSince: result.needsHumanSince, resolvedAt: result.resolvedAt, resolvedBy: result.resolvedBy };
    },
    async flagConversation(input, caller) {
      const operator = requireOperator(caller);
      const result = await deps.writer.submit({ kind: 'flag', conversationId: input.conversationId, note: input.note || null, operator, now: clock.now() });
      if (result?.kind !== 'flagged') throw new ConsoleError('not_found', `no conversation ${input.conversationId}`);
      // The list and Needs you update; no alert, which is for what the agent did not do themselves.
      if (!result.already) {
        deps.events.emit({ type: 'conversation', conversationId: input.conversationId });
        deps.team.changed();
      }
      return { needsHumanSince: result.needsHumanSince, alreadyFlagged: result.already };
    },
    async markRead(input, caller) {
      const reader = await readerOf(store.accounts, caller);
      const result = await deps.writer.submit({ kind: 'mark_read', conversationId: input.conversationId, upToId: input.upToId, reader });
      if (result?.kind !== 'unread') throw new ConsoleError('not_found', `no conversation ${input.conversationId}`);
      deps.events.emit({ type: 'conversation', conversationId: input.conversationId });
      return { unread: result.unread };
    },
    async listCanned(input) {
      return store.canned.list(input.search?.trim() || undefined);
    },
    async saveCanned(input) {
      if (input.id === undefined) return canned(await store.canned.add(input.title, input.content, clock.now()));
      if (!(await store.canned.update(input.id, input.title, input.content, clock.now()))) throw new ConsoleError('not_found', `no canned reply ${input.id}`);
      return canned(input.id);
    },
    async removeCanned(input) {
      return { removed: await store.canned.remove(input.id) };
    },
    async listAudit(input) {
      return deps.reads.audit(input);
    },
    async sendTestMessage(input) {
      const result = await sendTestMessage({ store, box: deps.box, clock, endpoint: deps.endpoint() }, input.clientId, input.content);
      // A handed-off test leaves no work in "Needs you": it is resolved at once, in the audit under
      // TEST_RESOLVER, and the panel has already said it was handed off and why.
      const conversationId = result.answer?.handoff ? (result.body as { conversation_id?: unknown }).conversation_id : undefined;
      if (typeof conversationId === 'string') {
        await deps.writer.submit({ kind: 'resolve', conversationId, operator: TEST_RESOLVER, now: clock.now() });
        deps.events.emit({ type: 'conversation', conversationId });
      }
      return result;
    },
  };
}
