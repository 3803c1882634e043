import { createHmac } from 'node:crypto';
import canonicalize from 'canonicalize';

/** An integrator's signing code, written from the protocol text alone (not the server's). */
export function signBody(client: string, secret: string, messageInfo: Record<string, unknown>, timestamp: number): Record<string, unknown> {
  const data = `${timestamp}.${client}.${canonicalize(messageInfo)}`;
  const signature = createHmac('sha256', Buffer.from(secret, 'utf8')).update(data, 'utf8').digest('hex');
  return { client, signature, timestamp, message_info: messageInfo };
}
