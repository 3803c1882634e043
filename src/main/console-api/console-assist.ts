import { createHash } from 'node:crypto';
import type { Store } from '../store/index.ts';
import type { MessageService } from '../conversations/message-service.ts';
import type { ActiveClient } from '../auth/client-registry.ts';
import type { ConsoleOutputs } from '../../shared/console-api.ts';
import { messageInfoSchema } from '../../shared/protocol/message-schema.ts';
import { canonicalJson } from '../auth/canonical-json.ts';
import { EngineTimeout } from '../engines/ask.ts';
import { newId } from '../store/ids.ts';
import { ConsoleError } from './handlers.ts';

/**
 * The console's assist request takes the integrator's own path (assist_dialog), so context reuse,
 * idempotency and storage are exactly what section 6 says. Picking a customer message sends its
 * msg_id and text; composing sends a fresh msg_id for the conversation's customer or group.
 */
export function createConsoleAssist(store: Store, service: MessageService, lookupClient: (id: string) => ActiveClient | undefined) {
  return async (conversationId: string, msgId: string | undefined, content: string | undefined): Promise<ConsoleOutputs['assist']> => {
    const conv = store.conversations.byId(conversationId)!;
    const client = lookupClient(conv.clientId);
    if (!client) throw new ConsoleError('not_found', `client ${conv.clientId} no longer exists`);
    let text = content?.trim() ?? '';
    if (msgId !== undefined && text === '') {
      const picked = store.messages.findAutoMessage(conv.clientId, msgId);
      const line = picked ? store.messages.context(picked.conversationId, picked.id, 1)[0] : undefined;
      if (!line) throw new ConsoleError('not_found', `no auto_dialog message ${msgId} in this client`);
      text = line.content;
    }
    const parsed = messageInfoSchema.safeParse({
      event_type: 'assist_dialog',
      msg_id: msgId ?? newId('message'),
      ...(conv.groupId ? { group_id: conv.groupId } : {}),
      ...(conv.customerId ? { from_user_id: conv.customerId } : {}),
      content: text,
      source: 'console',
    });
    if (!parsed.success) throw new ConsoleError('invalid_input', parsed.error.issues.map((i) => i.message).join('; '));
    const canonical = canonicalJson(parsed.data);
    let outcome;
    try {
      outcome = await service.handle({
        requestId: newId('request'),
        client,
        info: parsed.data,
        canonicalInfo: canonical,
        contentHash: createHash('sha256').update(canonical).digest('hex'),
        signature: `console:${newId('request')}`,
      });
    } catch (error) {
      if (error instanceof EngineTimeout) throw new ConsoleError('engine_timeout', error.message);
      throw error;
    }
    if (outcome.kind === 'conflict') throw new ConsoleError('msg_id_conflict', `msg_id ${outcome.msgId} was already used with other content`);
    const body = JSON.parse(outcome.body) as { suggestion: { msg_id: string; content: string; handoff: boolean }; context: { reused: boolean; matched_by: string | null; messages: number } };
    return {
      msgId: outcome.msgId,
      suggestion: { msgId: body.suggestion.msg_id, content: body.suggestion.content, handoff: body.suggestion.handoff },
      context: { reused: body.context.reused, matchedBy: body.context.matched_by, messages: body.context.messages },
    };
  };
}
