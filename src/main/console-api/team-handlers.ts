import type { StoreContract } from '../store/contract.ts';
import { checkBase } from './conflict.ts';
import type { MessageWriter } from '../conversations/message-service.ts';
import type { Clock } from '../../shared/clock.ts';
import type { ConsoleHandlers } from '../../shared/console-api.ts';
import { mentionsIn } from '../../shared/console-team.ts';
import type { EventBus } from './events.ts';
import type { Team } from '../team/team-service.ts';
import { ConsoleError } from './console-error.ts';
import { requireOperator } from './operator-guard.ts';
import { newId } from '../store/ids.ts';
import { conflictMessage } from './conflict.ts';

export interface TeamHandlerDeps {
  store: Pick<StoreContract, 'accounts' | 'conversations' | 'workspace' | 'team'>;
  writer: MessageWriter;
  clock: Clock;
  events: EventBus;
  team: Team;
}

type TeamMethods = 'listTeam' | 'assignConversation' | 'heartbeat' | 'addNote';

/** The team workflow's own methods: the team and its presence, assignment by hand, heartbeats, private notes. */
export function createTeamHandlers(deps: TeamHandlerDeps): Pick<ConsoleHandlers, TeamMethods> {
  const { store, clock, team } = deps;
  const liveAccount = async (id: string) => {
    const agent = await store.accounts.get(id);
    return agent && !agent.disabled ? agent : null;
  };

  return {
    async listTeam() {
      return { teamMode: await team.teamMode(), autoAssign: await team.autoAssignOn(), members: await team.members(), activity: team.activity() };
    },
    async assignConversation(input, caller) {
      const operator = requireOperator(caller);
      if (input.agentId !== null && !(await liveAccount(input.agentId))) throw new ConsoleError('invalid_input', `agentId: no active account ${input.agentId}`);
      const result = await deps.writer.submit({ kind: 'assign', conversationId: input.conversationId, agentId: input.agentId, operator, now: clock.now() });
      if (result?.kind !== 'assigned') throw new ConsoleError('not_found', `no conversation ${input.conversationId}`);
      if (result.changed) team.assignedByHand(input.conversationId, input.agentId, result.previous, operator);
      return { assignee: input.agentId, previous: result.previous };
    },
    async heartbeat(input, caller) {
      // A console with no account yet is nobody the team could see.
      if (!caller.account) return { presence: 'online' as const };
      return { presence: team.heartbeat(caller.account.id, input) };
    },
    async addNote(input, caller) {
      const operator = requireOperator(caller);
      if (!(await store.conversations.byId(input.conversationId))) throw new ConsoleError('not_found', `no conversation ${input.conversationId}`);
      // Only ids of active accounts are mentions (matched without regard to case); the rest is text.
      const accounts = (await store.accounts.list()).filter((a) => !a.disabled);
      // An exact id first: ids that differ only in case (made before ids were compared ignoring it) keep their own mentions.
      const named = (id: string) => accounts.find((a) => a.id === id) ?? accounts.find((a) => a.id.toLowerCase() === id.toLowerCase());
      const mentions = [...new Set(mentionsIn(input.content).flatMap((id) => named(id)?.id ?? []))];
      checkBase({ messageId: await store.workspace.latestMessageId(input.conversationId), replyId: await store.team.latestReplyId(input.conversationId) }, input.base);
      const msgId = newId('note');
      const result = await deps.writer.submit({
        kind: 'note',
        conversationId: input.conversationId,
        msgId,
        operator,
        content: input.content,
        mentions,
        base: input.base ?? null,
        force: input.force ?? false,
        now: clock.now(),
      });
      if (result?.kind === 'conversation_changed') throw new ConsoleError('conversation_changed', conflictMessage(result.arrived, 'note'), { arrived: result.arrived });
      if (result?.kind !== 'noted') throw new ConsoleError('not_found', `no conversation ${input.conversationId}`);
      deps.events.emit({ type: 'conversation', conversationId: input.conversationId });
      const notify = mentions.filter((id) => id !== operator.id);
      if (notify.length > 0) {
        const conv = await store.conversations.byId(input.conversationId);
        const who = conv ? { peer: conv.peer, groupId: conv.groupId, groupName: conv.groupName, customerId: conv.customerId, customerName: conv.customerName } : undefined;
        const text = input.content.length > 200 ? `${input.content.slice(0, 199)}…` : input.content;
        deps.events.emit({ type: 'mention', conversationId: input.conversationId, noteId: result.noteId, by: { id: operator.id, name: operator.name }, text, ...(who ? { who } : {}), recipients: notify });
      }
      return { noteId: result.noteId, msgId, mentioned: notify };
    },
  };
}
