import type { Channel, MessageRole } from '../../shared/conversation.ts';
import type { EventType, MessageInfo } from '../../shared/protocol/message-schema.ts';
import { assertNever } from '../../shared/assert-never.ts';
import { atMostCodePoints, LIMITS } from '../../shared/protocol/message-schema.ts';

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
  // Section 4 names the bound account whatever its type: its messages belong to the customer it wrote to.
  const customerId = fromStaffSide(info, boundAccount) && info.to_user_id ? info.to_user_id : info.from_user_id ? info.from_user_id : null;
  if (groupId !== null) return { peer: `g:${groupId}`, groupId, customerId };
  // The validator guarantees a sender: no group means a non-empty from_user_id.
  return { peer: `u:${customerId ?? ''}`, groupId: null, customerId };
}

/** The service-wide cap on a display name; the schema refuses longer values of the v1.2 fields. */
const NAME_MAX = LIMITS.displayNameMaxChars;

/**
 * Where integrators put the sender's display name: the service description's field, then the
 * names integrations used before v1.2 (unknown fields, kept as received and never validated).
 */
export const FROM_NAME_FIELDS = ['from_user_nickname', 'nickname', 'nick_name', 'from_user_name'] as const;

/** A name as the console shows it: trimmed, at most NAME_MAX code points, null when blank. */
function nameIn(info: Record<string, unknown>, field: string): string | null {
  const value = info[field];
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  if (trimmed === '') return null;
  if (atMostCodePoints(trimmed, NAME_MAX)) return trimmed;
  let out = '';
  let n = 0;
  for (const ch of trimmed) {
    if (++n > NAME_MAX) break;
    out += ch;
  }
  return out;
}

/** The sender's display name sent with a message, if any. */
export function nicknameOf(info: Record<string, unknown>): string | null {
  for (const field of FROM_NAME_FIELDS) {
    const name = nameIn(info, field);
    if (name !== null) return name;
  }
  return null;
}

/** The names a message carries: its sender's, its addressee's (to_user_id's) and its group's. */
export interface DisplayNames {
  from: string | null;
  to: string | null;
  group: string | null;
}

export function displayNamesOf(info: Record<string, unknown>): DisplayNames {
  return { from: nicknameOf(info), to: nameIn(info, 'to_user_nickname'), group: nameIn(info, 'group_name') };
}

/** Section 4: a message from staff, AI or the bound account belongs to the customer it was written to. */
export function fromStaffSide(info: MessageInfo, boundAccount: string | undefined): boolean {
  const role = senderRole(info, boundAccount);
  return role === 'staff' || role === 'ai' || (boundAccount !== undefined && info.from_user_id === boundAccount);
}
