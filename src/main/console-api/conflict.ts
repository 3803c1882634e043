import type { ArrivedEntry, DraftBase } from '../../shared/console-team.ts';
import { ConsoleError } from './console-error.ts';

/** conversation_changed's message, in the service's words (the console words it in its own language from `arrived`). */
export function conflictMessage(arrived: readonly ArrivedEntry[], what: 'reply' | 'note'): string {
  const customers = arrived.filter((a) => a.role === 'customer').length;
  const staff = arrived.length - customers;
  const parts = [customers ? `${customers} customer message${customers === 1 ? '' : 's'}` : null, staff ? `${staff} ${staff === 1 ? 'reply' : 'replies'} from staff` : null].filter(Boolean);
  return `the conversation changed since you started this ${what} (${parts.join(' and ')}); nothing was sent: read what arrived, then send again or send anyway`;
}

/**
 * A draft's base names entries that exist: one beyond the conversation's newest message or reply
 * could only be made up, and would pass every later check (nothing "arrived after" it).
 */
export function checkBase(latest: { messageId: number; replyId: number }, base: DraftBase | undefined): void {
  if (!base) return;
  if (base.messageId > latest.messageId || base.replyId > latest.replyId) {
    throw new ConsoleError('invalid_input', `base: {messageId: ${base.messageId}, replyId: ${base.replyId}} is newer than this conversation's newest entries ({messageId: ${latest.messageId}, replyId: ${latest.replyId}}); send the base the transcript showed`);
  }
}
