import { openDatabase } from './db.ts';
import { createStore } from './index.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';

/** An in-memory store with client `a`, conversations c1 and c2, and `add(conv, at)`: a pending delivery due at `at`. */
export function seededDeliveries() {
  const store = createStore(openDatabase(':memory:'));
  store.clients.create('a', DEFAULT_CLIENT_SETTINGS, 0);
  for (const c of ['c1', 'c2']) store.conversations.create({ id: c, clientId: 'a', channel: 'im', peer: `u:${c}`, groupId: null, customerId: c, autoReply: 'active', now: 0 });
  const add = (conv: string, at: number): number => {
    const replyId = store.messages.insertReply({ conversationId: conv, kind: 'auto', msgId: `r${Math.random()}`, replyTo: [], afterMessageId: 0, content: 'x', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: at });
    return store.deliveries.insert({ replyId, replyMsgId: `r${replyId}`, conversationId: conv, clientId: 'a', sendUrl: 'http://127.0.0.1:9/', messageInfo: '{}', state: 'pending', nextAttemptAt: at, createdAt: at });
  };
  return { store, add };
}
