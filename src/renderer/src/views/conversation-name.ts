import type { ConversationSummary } from '../../../shared/console-api.ts';

/** Who the conversation is with, as the operator knows them: the group, else the nickname, else the id. */
export function displayName(c: ConversationSummary): string {
  return c.groupId ? `# ${c.groupId}` : (c.customerName ?? c.customerId ?? c.peer);
}
