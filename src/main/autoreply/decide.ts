import type { AutoReplyState, MessageRole, ReplyReason } from '../../shared/conversation.ts';
import type { GroupPolicy } from '../../shared/client-settings.ts';
import { assertNever } from '../../shared/assert-never.ts';

export interface DecisionInput {
  role: Exclude<MessageRole, 'command'>;
  isGroup: boolean;
  groupPolicy: GroupPolicy;
  /** The bound account or a configured bot id is in at_list. */
  mentioned: boolean;
  /** The message quotes one of the service's own replies. */
  quotesOurReply: boolean;
  /** Auto-reply state of the conversation after this message's own effect (a staff pause). */
  state: AutoReplyState;
  createTimestampSeconds: number | null;
  now: number;
  /** 0 disables the stale limit. */
  staleMinutes: number;
  /**
   * The conversation's auto replies in the last minute. Counting is a query: a caller may pass 0
   * first and count only when that decision is `scheduled`, the only one the count can change.
   */
  autoRepliesLastMinute: number;
}

export interface Decision {
  scheduled: boolean;
  reason: ReplyReason;
}

export const MAX_AUTO_REPLIES_PER_MINUTE = 6;

function addressedInGroup(input: DecisionInput): boolean {
  switch (input.groupPolicy) {
    case 'all':
      return true;
    case 'never':
      return false;
    case 'mention':
      return input.mentioned || input.quotesOurReply;
    default:
      return assertNever(input.groupPolicy, 'group policy');
  }
}

/**
 * A customer message left unanswered only because a human has the conversation (stopped, or
 * paused by a staff message or an operator reply): someone must be told, or nobody answers it.
 * Every other reason is no one's to answer (staff, not addressed, too old) or answered later.
 */
export function waitsForHuman(reason: ReplyReason): boolean {
  switch (reason) {
    case 'auto_reply_stopped':
    case 'auto_reply_paused':
      return true;
    case 'scheduled':
    case 'sender_not_customer':
    case 'not_mentioned':
    case 'stale_message':
    case 'rate_limited':
      return false;
    default:
      return assertNever(reason, 'reply reason');
  }
}

/**
 * Whether a message gets an automatic reply, and why. The reasons are checked from the most
 * intrinsic to the message (who sent it, whether it was addressed to us, its age) to the state
 * of the conversation, so the reason shown is the one an operator can act on last.
 */
export function decideReply(input: DecisionInput): Decision {
  const no = (reason: ReplyReason): Decision => ({ scheduled: false, reason });
  if (input.role !== 'customer') return no('sender_not_customer');
  if (input.isGroup && !addressedInGroup(input)) return no('not_mentioned');
  if (
    input.staleMinutes > 0 &&
    input.createTimestampSeconds !== null &&
    input.now - input.createTimestampSeconds * 1000 > input.staleMinutes * 60_000
  ) {
    return no('stale_message');
  }
  switch (input.state) {
    case 'stopped':
      return no('auto_reply_stopped');
    case 'paused':
      return no('auto_reply_paused');
    case 'active':
      break;
    default:
      return assertNever(input.state, 'auto-reply state');
  }
  if (input.autoRepliesLastMinute >= MAX_AUTO_REPLIES_PER_MINUTE) return no('rate_limited');
  return { scheduled: true, reason: 'scheduled' };
}
