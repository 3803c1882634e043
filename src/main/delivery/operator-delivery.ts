import type { ConversationRow } from '../store/conversations.ts';
import type { ClientSettings } from '../../shared/client-settings.ts';
import type { Operator, SendTarget } from '../../shared/console-workspace.ts';

/**
 * Where an operator reply goes (section 7): in an im conversation, the send_url its latest
 * auto_dialog message carried, else the client's default; in a web conversation, the client's
 * default only. Without one the console says why, and how to set one.
 */
export function sendTargetOf(conv: Pick<ConversationRow, 'channel' | 'clientId'>, settings: ClientSettings | undefined, latestAutoSendUrl: string | null): SendTarget {
  if (!settings) return { ok: false, code: 'no_client', reason: `client ${conv.clientId} no longer exists, so there is nowhere to send a reply` };
  const fix = `Set a default send_url with \`npm run cli -- clients set ${conv.clientId} --send-url URL\` or in the Clients view.`;
  if (conv.channel === 'im') {
    const url = latestAutoSendUrl ?? settings.sendUrl;
    if (url) return { ok: true, url };
    return { ok: false, code: 'no_send_url', reason: `No send_url: the latest auto_dialog message of this conversation carried none and client ${conv.clientId} has no default send_url. ${fix}` };
  }
  if (settings.sendUrl) return { ok: true, url: settings.sendUrl };
  return { ok: false, code: 'no_send_url', reason: `No send_url: a web conversation is answered at its client's default send_url, and client ${conv.clientId} has none. ${fix}` };
}

export interface OperatorDeliveryInput {
  replyMsgId: string;
  conversation: Pick<ConversationRow, 'id' | 'channel' | 'groupId' | 'customerId'>;
  settings: ClientSettings;
  replyTo: string[];
  /** In a group, the customer answered (the sender of the latest message replied to). */
  asker: string | null;
  content: string;
  operator: Operator;
  now: number;
}

/** The delivery's message_info: an auto reply's form, from staff (type 3), naming the operator. */
export function operatorDeliveryInfo(i: OperatorDeliveryInput): Record<string, unknown> {
  const { conversation: c } = i;
  const to = c.groupId ? (i.asker ?? c.customerId) : (c.customerId ?? i.asker);
  return {
    msg_id: i.replyMsgId,
    reply_to: i.replyTo,
    conversation_id: c.id,
    ...(c.groupId ? { group_id: c.groupId } : {}),
    ...(i.settings.boundAccount ? { from_user_id: i.settings.boundAccount } : {}),
    ...(to ? { to_user_id: to } : {}),
    ...(c.groupId && to ? { at_list: [to] } : {}),
    content: i.content,
    message_type: 1,
    event_type: c.channel === 'im' ? 'auto_dialog' : 'website_dialog',
    from_user_type: 3,
    operator: { id: i.operator.id, name: i.operator.name },
    create_timestamp: Math.floor(i.now / 1000),
  };
}
