import type { StoreContract } from '../store/contract.ts';
import type { MessageWriter } from '../conversations/message-service.ts';
import type { ActiveClient } from '../auth/client-registry.ts';
import { toContextLine, type Engine, type EngineAnswer } from '../engines/engine.ts';
import type { Clock } from '../../shared/clock.ts';
import type { ConsoleOutputs, Operator } from '../../shared/console-api.ts';
import { askEngine, EngineTimeout } from '../engines/ask.ts';
import { newId } from '../store/ids.ts';
import { ConsoleError } from './handlers.ts';

export interface ConsoleAssistDeps {
  store: Pick<StoreContract, 'conversations' | 'workspace' | 'messages'>;
  writer: MessageWriter;
  engine: Engine;
  clock: Clock;
  lookupClient: (id: string) => ActiveClient | undefined;
  engineTimeoutMs: number;
  contextLines: number;
  /** The server's fallback text, where the client has none. */
  fallbackText: string;
}

/**
 * A suggestion from the console, for the conversation's latest customer message with the
 * conversation up to it as context. Unlike an integrator's assist_dialog (section 6, unchanged)
 * it writes no message at all: only the suggestion, with the agent's instruction, so the
 * transcript never shows an agent's words as the customer's, and a web conversation never spawns
 * an im one.
 */
export function createConsoleAssist(deps: ConsoleAssistDeps) {
  const { store, clock } = deps;
  return async (conversationId: string, instruction: string | undefined, operator: Operator): Promise<ConsoleOutputs['assist']> => {
    const conv = await store.conversations.byId(conversationId);
    if (!conv) throw new ConsoleError('not_found', `no conversation ${conversationId}`);
    const client = deps.lookupClient(conv.clientId);
    if (!client) throw new ConsoleError('not_found', `client ${conv.clientId} no longer exists`);
    const target = await store.workspace.latestCustomerMessage(conv.id);
    if (!target) throw new ConsoleError('not_found', 'this conversation has no customer message yet to suggest an answer for');
    const context = (await store.messages.context(conv.id, target.id, deps.contextLines)).map(toContextLine);
    const wanted = instruction?.trim() || undefined;
    let answer: EngineAnswer;
    try {
      answer = await askEngine(
        deps.engine,
        {
          purpose: 'suggestion',
          clientId: client.id,
          channel: conv.channel,
          isGroup: conv.groupId !== null,
          context,
          fallbackText: client.settings.fallbackText ?? deps.fallbackText,
          ...(wanted ? { instruction: wanted } : {}),
        },
        deps.engineTimeoutMs,
        clock,
      );
    } catch (error) {
      if (error instanceof EngineTimeout) throw new ConsoleError('engine_timeout', error.message);
      throw error;
    }
    const suggestionMsgId = newId('suggestion');
    const stored = await deps.writer.submit({
      kind: 'console_suggestion',
      conversationId: conv.id,
      messageId: target.id,
      messageMsgId: target.msgId,
      suggestionMsgId,
      engine: answer.engine ?? deps.engine.name,
      answer,
      instruction: wanted ?? null,
      operator,
      now: clock.now(),
    });
    if (!stored) throw new ConsoleError('not_found', `no conversation ${conversationId}`);
    return {
      msgId: target.msgId,
      suggestion: { msgId: suggestionMsgId, content: answer.content, handoff: answer.handoff },
      context: { reused: true, matchedBy: 'conversation', messages: context.length },
    };
  };
}
