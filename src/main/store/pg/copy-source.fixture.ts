import { openDatabase } from '../db.ts';
import { createStore, type Store } from '../index.ts';
import { databasePath, secretKeyPath } from '../data-dir.ts';
import { keyFileBox } from '../../auth/secret-box.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../../shared/client-settings.ts';
import { engineConfigSchema } from '../../../shared/engine-config.ts';

// A data folder with a row in every table `store copy` moves, written through the store's own
// functions (test/store-copy.test.ts); not imported by the app.

export const CHINESE_LINE = '你好，我想申请退款，订单号 A123';

/** Fills `dataDir`'s store; `messages` customer messages (each answered) in conversations over both channels. */
export function fillCopySource(dataDir: string, messages = 60): void {
  const store = createStore(openDatabase(databasePath(dataDir)));
  try {
    fill(store, dataDir, messages);
  } finally {
    store.close();
  }
}

function fill(store: Store, dataDir: string, messageCount: number): void {
  const box = keyFileBox(secretKeyPath(dataDir));
  const t0 = 1_700_000_000_000;
  store.clients.create('acme', { ...DEFAULT_CLIENT_SETTINGS, sendUrl: 'https://hooks.example.com/in' }, t0);
  store.clients.create('web', DEFAULT_CLIENT_SETTINGS, t0);
  store.clients.addSecret('acme', box.seal('s'.repeat(40)), 'ssss', t0);
  store.clients.addSecret('acme', box.seal('t'.repeat(40)), 'tttt', t0 + 1);
  store.clients.retireOlderSecrets('acme', t0 + 2);
  store.engines.save('gpt', engineConfigSchema.parse({ model: 'm', systemPrompt: '只回答关于订单的问题' }), box.seal('sk-test'), t0);
  store.settings.put('kb_threshold', '0.42');
  store.canned.add('退款', '七天内可以退款。', t0);

  store.accounts.setOwner({ id: 'owner', name: 'Owner', now: t0 });
  store.accounts.add({ id: 'ann', name: '安妮', role: 'agent', capacity: 3, now: t0 });
  store.accounts.add({ id: 'bob', name: 'Bob', role: 'admin', now: t0 });
  store.accounts.setPasswordHash('bob', 'scrypt$x$y', t0);
  store.accounts.addSession({ digest: 'd1', agentId: 'ann', address: '10.0.0.1', now: t0 });
  store.accounts.addSession({ digest: 'd2', agentId: 'bob', address: null, now: t0 });
  store.accounts.endSession('d2', 'signed out', t0 + 5);
  store.accounts.replaceSignInLink('ann', 'link1', t0 + 3_600_000, t0);

  const conversations = [
    store.conversations.create({ id: 'v-im-1', clientId: 'acme', channel: 'im', peer: 'u:alice', groupId: null, customerId: 'alice', autoReply: 'active', now: t0 }),
    store.conversations.create({ id: 'v-im-2', clientId: 'acme', channel: 'im', peer: 'g:team', groupId: 'team', customerId: null, autoReply: 'paused', now: t0 }),
    store.conversations.create({ id: 'v-web-1', clientId: 'web', channel: 'web', peer: 'visitor-9', groupId: null, customerId: 'visitor-9', autoReply: 'active', now: t0 }),
  ];
  store.people.remember('acme', 'alice', '爱丽丝', t0);
  store.conversations.rename('v-im-1', '爱丽丝', null);

  const info = (i: number): string => JSON.stringify({ msg_id: `m${i}`, content: `line ${i}`, files: i % 7 === 0 ? [{ name: '发票.pdf', url: 'https://files.example.com/a.pdf', size: 1234 }] : undefined, extra: { b: 1, a: [i, null] } });
  let lastMessage = 0;
  let lastReply = 0;
  for (let i = 0; i < messageCount; i++) {
    const conv = conversations[i % conversations.length]!;
    const at = t0 + 60_000 * i;
    const content = i === 5 ? CHINESE_LINE : i % 4 === 0 ? `第${i}条：包裹还没有到` : `message ${i} about order #${i}`;
    lastMessage = store.messages.insert({
      conversationId: conv.id, clientId: conv.clientId, eventType: conv.channel === 'web' ? 'website_dialog' : 'auto_dialog', msgId: `m${i}`,
      role: 'customer', fromUserId: conv.customerId, fromUserType: 1, content, messageInfo: info(i), createTimestamp: Math.floor(at / 1000), receivedAt: at,
      replyScheduled: true, replyReason: null,
    });
    store.conversations.touch(conv.id, 1, at);
    const handoff = i % 5 === 0;
    lastReply = store.messages.insertReply({
      conversationId: conv.id, kind: conv.channel === 'web' ? 'website' : 'auto', msgId: `r${i}`, replyTo: [`m${i}`], afterMessageId: lastMessage, content: handoff ? '转人工' : `answer ${i}`,
      handoff, engine: 'kb', confidence: handoff ? null : 0.875, sources: [{ entryId: 1, score: 0.5 }], cause: handoff ? 'no_answer' : null, createdAt: at + 1500,
    });
    store.messages.settleReply(lastMessage, handoff ? 'handoff' : 'answered', `r${i}`, null);
    if (conv.channel === 'im' && !handoff) {
      const delivery = store.deliveries.insert({ replyId: lastReply, replyMsgId: `r${i}`, conversationId: conv.id, clientId: conv.clientId, sendUrl: 'https://hooks.example.com/in', messageInfo: info(i), state: 'pending', nextAttemptAt: at + 2000, createdAt: at + 1600 });
      const fails = i % 3;
      for (let a = 1; a <= fails; a++) {
        store.deliveries.recordAttempt({ deliveryId: delivery, attempt: a, startedAt: at + 2000 * a, durationMs: 12.5, status: 503, error: 'HTTP 503', outcome: 'retry', state: 'pending', nextAttemptAt: at + 2000 * (a + 1), now: at + 2000 * a });
      }
      store.deliveries.recordAttempt({ deliveryId: delivery, attempt: fails + 1, startedAt: at + 9000, durationMs: 3.25, status: 200, error: null, outcome: 'sent', state: 'sent', nextAttemptAt: at + 9000, now: at + 9000 });
    }
    store.requestLog.insert({ at, requestId: `q${i}`, method: 'POST', path: '/v1/messages', clientId: conv.clientId, eventType: 'auto_dialog', msgId: `m${i}`, conversationId: conv.id, status: 200, code: null, latencyMs: 1.75, replayed: false, problem: null, remote: '10.0.0.2', verified: true });
    store.idempotency.put({ clientId: conv.clientId, eventType: 'auto_dialog', msgId: `m${i}`, contentHash: `h${i}`, status: 200, body: '{"ok":true}', conversationId: conv.id, messageId: lastMessage, signature: `sig${i}`, at });
  }
  // Refused requests, one row standing for several, then retention deleting the oldest verified
  // rows: their minutes stay counted in stats_minutes, which a rebuild from rows would lose.
  const refused = { at: t0, requestId: 'bad', method: 'POST', path: '/v1/messages', clientId: 'acme', eventType: null, msgId: null, conversationId: null, status: 401, code: 'bad_signature', latencyMs: 0.5, replayed: false, problem: '{"title":"bad signature"}', remote: '203.0.113.0/64', verified: false };
  store.requestLog.insert(refused, 'agg-1');
  store.requestLog.addToAggregate('agg-1', 3, t0 + 10, false);
  store.requestLog.prune({ before: t0 + 60_000 * 3, maxRows: 1e9, maxUnverifiedRows: 1e9, batch: 100 });

  const operator = { id: 'ann', name: '安妮' };
  store.team.assign('v-im-1', 'ann', t0 + 100);
  store.conversations.flagNeedsHuman('v-im-2', t0 + 200, 'handoff');
  store.conversations.resolve('v-web-1', t0 + 300, 'bob');
  store.team.insertNote({ conversationId: 'v-im-1', msgId: 'note-1', afterMessageId: lastMessage, afterReplyId: lastReply, author: operator, content: '@bob 请看一下', mentions: ['bob'], now: t0 + 400 });
  store.team.markRead({ id: 'ann', floor: 0 }, 'v-im-1', lastMessage);
  store.audit.insert({ at: t0 + 500, operator, action: 'assign', conversationId: 'v-im-1', detail: 'to ann', address: '10.0.0.1' });
  store.audit.insert({ at: t0 + 600, operator: null, action: 'client_settings', conversationId: null, detail: '{"sendUrl":"changed"}' });

  const entry = store.kb.add('怎么退款', '七天内可以申请退款。', t0, ['如何退款', 'refund?']);
  store.kb.add('How do I reset my password?', 'Use the link on the sign-in page.', t0);
  store.kbVectors.save(entry, 'embed-1', [], [{ hash: 'h1', vector: new Float32Array([0.25, -1.5, 3]) }], t0);
  const proposal = store.proposals.add({ kind: 'phrasing', source: 'handoff', question: '退款要多久', answer: '七天内可以申请退款。', entryId: entry, conversationId: 'v-im-1', messageIds: ['m0'], operator, now: t0 + 700 });
  store.proposals.add({ kind: 'entry', source: 'agent', question: 'Do you ship abroad?', answer: 'Yes, to 40 countries.', entryId: null, conversationId: null, messageIds: [], operator: null, now: t0 + 710 });
  store.proposals.decide([proposal], { state: 'merged', by: operator, at: t0 + 800, reason: null, resultEntryId: entry });

  const params = { from: t0, to: t0 + 3_600_000, since: '1h', clientId: null, engine: null, threshold: 0.4, systemPrompt: null, withProposals: true, concurrency: 2, limit: 100, baseThreshold: 0.42 };
  const side = (handoff: boolean) => ({ handoff, content: handoff ? '转人工' : 'answer', score: handoff ? null : 0.9, engine: 'kb', cause: null, llm: false, ms: 1.5, tokens: null });
  const sideTotals = { answered: 1, handoff: 1, llmCalls: 0, callsWithUsage: 0, promptTokens: 0, completionTokens: 0, llmMs: 3 };
  const run = store.replay.startRun(params, operator, t0 + 900);
  store.replay.finishRun(run, 'done', t0 + 950, { questions: 2, before: sideTotals, after: sideTotals, changed: { now_answered: 1, now_handoff: 0, other_answer: 0 }, elapsedMs: 50 }, [
    { messageId: 1, conversationId: 'v-im-1', clientId: 'acme', eventType: 'auto_dialog', question: '怎么退款', askedAt: t0, before: side(true), after: side(false), change: 'now_answered' },
    { messageId: 2, conversationId: 'v-im-2', clientId: 'acme', eventType: 'auto_dialog', question: 'hello', askedAt: t0 + 1, before: side(false), after: side(false), change: 'same' },
  ]);
  store.replay.startRun(params, null, t0 + 990);
}
