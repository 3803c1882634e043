import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../store/db.ts';
import { createStore } from '../store/index.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';
import { systemClock } from '../../shared/clock.ts';
import type { Engine, EngineRequest } from '../engines/engine.ts';
import { createReplay } from './replay.ts';

const T = Date.UTC(2026, 10, 20, 9, 0, 0);

/** A store with one web conversation: two questions, the first answered, as the live path left it. */
function seeded() {
  const store = createStore(openDatabase(join(mkdtempSync(join(tmpdir(), 'sb-replay-unit-')), 'db.sqlite')));
  store.clients.create('acme', { ...DEFAULT_CLIENT_SETTINGS, engine: 'spy' } as never, T);
  store.conversations.create({ id: 'c1', clientId: 'acme', channel: 'web', peer: 'v1', groupId: null, customerId: 'v1', autoReply: 'active', now: T });
  const ask = (content: string, at: number): number =>
    store.messages.insert({ conversationId: 'c1', clientId: 'acme', eventType: 'website_dialog', msgId: `m-${at}`, role: 'customer', fromUserId: 'v1', fromUserType: 2, content, messageInfo: '{}', createTimestamp: null, receivedAt: at, replyScheduled: null, replyReason: null });
  const first = ask('Where is my order?', T + 1000);
  store.messages.insertReply({ conversationId: 'c1', kind: 'website', msgId: 'r-1', replyTo: ['m-1'], afterMessageId: first, content: 'Open Orders to track it.', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: T + 1001 });
  const second = ask('and when does it arrive?', T + 2000);
  store.messages.insertReply({ conversationId: 'c1', kind: 'website', msgId: 'r-2', replyTo: ['m-2'], afterMessageId: second, content: 'ANSWER GIVEN AT THE TIME', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: T + 2001 });
  return store;
}

test('each question is answered with the transcript up to it: earlier lines and answers, never the answer it got', async () => {
  const store = seeded();
  const seen: EngineRequest[] = [];
  const spy: Engine = { name: 'spy', answer: async (r) => (seen.push(r), { content: 'x', handoff: false, confidence: null, sources: [] }) };
  const replay = createReplay({ store, openKey: () => '', kbThreshold: 0.45, engineTimeoutMs: 5000, fallbackText: 'f', contextLines: 50, clock: systemClock });
  const plan = await replay.plan({ from: T, to: T + 10_000, threshold: 0.3 }, T + 10_000);
  // The client's engine "spy" is not configured: both sides hand off; the context is what matters here.
  plan.before.engine = () => ({ engine: spy, llm: null });
  plan.after.engine = () => ({ engine: spy, llm: null });
  await replay.run(plan, { signal: new AbortController().signal });
  const lines = (i: number): string[] => [...new Set(seen.filter((r) => r.context.at(-1)!.content === plan.questions[i]!.content).map((r) => r.context.map((l) => `${l.role}: ${l.content}`).join(' | ')))];
  assert.deepEqual(lines(0), ['customer: Where is my order?']);
  assert.deepEqual(lines(1), ['customer: Where is my order? | ai: Open Orders to track it. | customer: and when does it arrive?']);
  assert.deepEqual(seen.map((r) => r.purpose), ['website', 'website', 'website', 'website']);
  store.close();
});
