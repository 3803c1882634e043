import type { NotificationConstructorOptions } from 'electron';
import type { ConsoleEvent } from '../../shared/console-api.ts';
import { assertNever } from '../../shared/assert-never.ts';

type AlertReason = Extract<ConsoleEvent, { type: 'alert' }>['reason'];

function titleOf(reason: AlertReason): string {
  switch (reason) {
    case 'handoff':
      return 'Switchboard: the bot handed over a conversation';
    case 'delivery_failed':
      return 'Switchboard: a reply could not be delivered';
    case 'needs_human':
      return 'Switchboard: a conversation needs you';
    case 'customer_waiting':
      return 'Switchboard: a customer wrote while a human has the conversation';
    case 'staff_silent':
      return 'Switchboard: a customer is still waiting for staff in the IM';
    default:
      return assertNever(reason, 'alert reason');
  }
}

/**
 * The desktop notification for a live event, or null. Only alerts notify, and only while the
 * window is not focused: an operator looking at the console sees the alert there. (The renderer
 * uses Web Notifications only in the browser console; in the app this is the one notification.)
 * Kept as data so it is tested without the Electron binary.
 */
export function alertNotification(event: ConsoleEvent, windowFocused: boolean): NotificationConstructorOptions | null {
  if (windowFocused) return null;
  // Team mode: a conversation given to the owner, or a colleague's note that names them.
  if (event.type === 'assigned') {
    const by = event.by ? `${event.by.name} assigned you a conversation` : 'A conversation was assigned to you';
    return { title: `Switchboard: ${by}`, body: event.said ?? '', silent: false };
  }
  if (event.type === 'mention') return { title: `Switchboard: ${event.by.name} mentioned you in a note`, body: event.text, silent: false };
  if (event.type !== 'alert') return null;
  return {
    title: titleOf(event.reason),
    body: event.text,
    silent: false,
  };
}
