import type { Channel, MessageRole } from '../../shared/conversation.ts';
import type { EventType, MessageInfo } from '../../shared/protocol/message-schema.ts';
import { assertNever } from '../../shared/assert-never.ts';

export function channelOf(eventType: EventType): Channel {
  switch (eventType) {
    case 'website_dialog':
      return 'web';
    case 'auto_dialog':
    case 'assist_dialog':
    case 'cmd_dialog':
      return 'im';
    default:
      return assertNever(eventType, 'event_type');
  }
}

/** Staff are type 3 or the client's own bound account; AI is type 4; everyone else is a customer. */
export function senderRole(info: MessageInfo, boundAccount: string | undefined): Exclude<MessageRole, 'command'> {
  if (info.from_user_type === 4) return 'ai';
  if (info.from_user_type === 3) return 'staff';
  // Section 6: the bound account is staff when it writes as an ordinary account (type 1, or no type
  // outside auto_dialog); type 2 says "customer", and the sender's own word wins.
  if (boundAccount !== undefined && info.from_user_id === boundAccount && info.from_user_type !== 2) return 'staff';
  return 'customer';
}

export interface Peer {
  peer: string;
  groupId: string | null;
  customerId: string | null;
}

/** Section 4: g:<group_id> for groups, else u:<customer id> seen from whichever side spoke. */
export function peerOf(info: MessageInfo, boundAccount: string | undefined): Peer {
  const groupId = info.group_id ? info.group_id : null;
  const role = senderRole(info, boundAccount);
  // Section 4 names the bound account whatever its type: its messages belong to the customer it wrote to.
  const fromStaffSide = role === 'staff' || role === 'ai' || (boundAccount !== undefined && info.from_user_id === boundAccount);
  const customerId = fromStaffSide && info.to_user_id ? info.to_user_id : info.from_user_id ? info.from_user_id : null;
  if (groupId !== null) return { peer: `g:${groupId}`, groupId, customerId };
  // The validator guarantees a sender: no group means a non-empty from_user_id.
  return { peer: `u:${customerId ?? ''}`, groupId: null, customerId };
}

/** Where integrators put a sender's display name, in the order the console prefers them. */
const NICKNAME_FIELDS = ['nickname', 'nick_name', 'from_user_name'] as const;

/** The display name sent with a message (an unknown field, kept as received), if any. */
export function nicknameOf(info: Record<string, unknown>): string | null {
  for (const field of NICKNAME_FIELDS) {
    const value = info[field];
    if (typeof value === 'string' && value.trim() !== '') return value.trim().slice(0, 200);
  }
  return null;
}
