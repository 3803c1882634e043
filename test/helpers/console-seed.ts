import { cli, secretFrom, type ServeProcess } from './processes.ts';
import { consoleCall, sendAs, waitFor } from './console-session.ts';
import type { ConversationPage, DeliveryItem } from '../../src/shared/console-api.ts';

export const LONG_GROUP = 'a-group-with-a-name-so-long-that-it-can-never-fit-in-the-conversation-list-row';
export const LONG_NICKNAME = 'Carolina Anastasia Maximiliana von Langenname-Überbreit';

export interface Seed {
  acme: string;
  shop: string;
  /** Conversation ids by customer. */
  conversations: Record<'alice' | 'bob' | 'carol' | 'dave', string>;
  /** request_id of the refused request with field errors. */
  invalidRequestId: string;
}

/**
 * Two clients before serve starts: acme's send_url answers 400 (its replies die at once), shop's
 * refuses connections (its replies are retried).
 */
export function addSeedClients(dataDir: string, deadUrl: string): { acme: string; shop: string } {
  const acme = secretFrom(cli(dataDir, 'clients', 'add', 'acme', '--send-url', deadUrl).stdout);
  const shop = secretFrom(cli(dataDir, 'clients', 'add', 'shop', '--send-url', 'http://127.0.0.1:9/hook').stdout);
  cli(dataDir, 'kb', 'add', '--question', 'Where is my parcel?', '--answer', 'Track it with the link in your confirmation email.');
  return { acme, shop };
}

/**
 * Traffic through the endpoint, as integrations send it: a dead delivery, a retrying one, two
 * handoffs (bob's before carol's), a refused request with field errors, a forged one naming acme
 * (an unverified row), a long group name.
 */
export async function seedTraffic(server: ServeProcess, secrets: { acme: string; shop: string }): Promise<Seed> {
  const ids: Partial<Seed['conversations']> = {};
  const post = async (client: 'acme' | 'shop', info: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const r = await sendAs(server, client, secrets[client], info);
    return (await r.json()) as Record<string, unknown>;
  };
  const im = (msgId: string, from: string, content: string, extra: Record<string, unknown> = {}) => ({
    event_type: 'auto_dialog',
    msg_id: msgId,
    from_user_id: from,
    from_user_type: 2,
    content,
    ...extra,
  });
  ids.alice = (await post('acme', im('seed-alice', 'alice', 'Where is my parcel?', { from_user_nickname: 'Alice Liddell' })))['conversation_id'] as string;
  ids.dave = (await post('shop', im('seed-dave', 'dave', 'Where is my parcel?')))['conversation_id'] as string;
  ids.bob = (await post('acme', im('seed-bob', 'bob', 'I want my money back for the broken kettle')))['conversation_id'] as string;
  await post('acme', im('seed-group', 'erin', 'Is anyone here?', { group_id: LONG_GROUP }));
  await waitFor('bob to need a human', async () => (await consoleCall<ConversationPage>(server, 'listConversations', { view: 'needs_you' })).items.some((c) => c.id === ids.bob));
  ids.carol = (await post('shop', im('seed-carol-1', 'carol', 'Hello? My order never came', { from_user_nickname: LONG_NICKNAME })))['conversation_id'] as string;
  await post('shop', im('seed-carol-2', 'carol', 'Is there a person who can help me?', { from_user_nickname: LONG_NICKNAME }));
  const refused = await sendAs(server, 'acme', secrets.acme, { event_type: 'auto_dialog', msg_id: 'seed-bad', from_user_id: 'mallory', content: '' });
  const invalidRequestId = ((await refused.json()) as { request_id: string }).request_id;
  // A forged request naming acme: the log shows it as an unverified claim, not as acme's.
  await fetch(server.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client: 'acme', signature: 'ab'.repeat(32), timestamp: Math.floor(Date.now() / 1000), message_info: im('seed-forged', 'mallory', 'hi') }),
  });
  await waitFor('carol to need a human', async () => (await consoleCall<ConversationPage>(server, 'listConversations', { view: 'needs_you' })).items.some((c) => c.id === ids.carol));
  await waitFor('a dead and a retrying delivery', async () => {
    const list = await consoleCall<DeliveryItem[]>(server, 'listDeliveries', {});
    return list.some((d) => d.state === 'dead' && d.clientId === 'acme') && list.some((d) => d.state === 'retrying' && d.clientId === 'shop');
  });
  return { ...secrets, conversations: ids as Seed['conversations'], invalidRequestId };
}
