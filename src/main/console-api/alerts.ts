import type { StoreContract } from '../store/contract.ts';
import type { ConversationRow } from '../store/conversations.ts';
import type { ConsoleEvent } from '../../shared/console-api.ts';
import type { EventBus } from './events.ts';
import { TEST_VISITOR } from './test-message.ts';
import { assertNever } from '../../shared/assert-never.ts';
import { titleWithRef } from '../../shared/console-display.ts';

type AlertReason = Extract<ConsoleEvent, { type: 'alert' }>['reason'];

export const clip = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** What a customer last asked, and who (a group has many members: the alert names the one who asked). */
export type LastAsked = { text: string; by: string | null } | null;

/** One short sentence for a notification: who is waiting, and what they last said (`last`). */
export function alertText(conv: ConversationRow | undefined, last: LastAsked, reason: AlertReason): string {
  if (!conv) return 'A conversation needs you';
  const who = titleWithRef({ ...conv, customerName: conv.customerName && clip(conv.customerName, 40), groupName: conv.groupName && clip(conv.groupName, 40) });
  const asker = conv.groupId && last?.by ? `${clip(last.by, 40)}: ` : '';
  const said = last ? `: ${asker}“${clip(last.text, 100)}”` : '';
  switch (reason) {
    case 'handoff':
      return `The bot handed ${who} over to you${said}`;
    case 'delivery_failed':
      return `A reply to ${who} could not be delivered${said}`;
    case 'needs_human':
      return `${who} needs you${said}`;
    case 'customer_waiting':
      return `${who} wrote while a human has the conversation${said}`;
    case 'staff_silent':
      return `${who} is still waiting for the staff who took the conversation over in the IM${said}`;
    default:
      return assertNever(reason, 'alert reason');
  }
}

/**
 * The alert for a conversation that newly needs a human. The writer thread only reports that the
 * flag changed (once, by a conditional update); main emits after the commit.
 */
export function createAlerts(store: Pick<StoreContract, 'conversations' | 'workspace'>, events: EventBus) {
  /** `recipients`: team mode's routing (the assignee, or the queue's watchers); absent: every console. */
  return async (conversationId: string, reason: AlertReason, recipients?: string[]): Promise<void> => {
    // The console's own test message (Clients → Integrate) is no customer: it must not call anyone.
    const conv = await store.conversations.byId(conversationId);
    if (conv?.channel === 'web' && conv.customerId === TEST_VISITOR) return;
    const last = conv ? await store.workspace.lastCustomerText(conversationId) : null;
    const who = conv && { peer: conv.peer, groupId: conv.groupId, groupName: conv.groupName, customerId: conv.customerId, customerName: conv.customerName };
    const saidBy = conv?.groupId && last?.by ? { saidBy: clip(last.by, 60) } : {};
    events.emit({ type: 'alert', conversationId, reason, text: alertText(conv, last, reason), said: last === null ? null : clip(last.text, 200), ...saidBy, ...(who ? { who } : {}), ...(recipients ? { recipients } : {}) });
  };
}
