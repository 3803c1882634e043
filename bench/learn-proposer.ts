/**
 * What learning from an operator's reply costs on the main thread: the proposer's work for one
 * reply to a handed-off question (reads, masking, matching the answer against every entry's
 * answer, the insert), against generated knowledge bases of growing size. Not a timed test: run
 * it before and after a change and compare (`node bench/learn-proposer.ts`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/main/store/db.ts';
import { createStore } from '../src/main/store/index.ts';
import { sqliteInTransaction } from '../src/main/store/in-transaction.ts';
import { createProposer } from '../src/main/learn/proposer.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../src/shared/client-settings.ts';
import { knowledgeBase } from './kb-data.ts';

const REPLIES = 200;

async function measure(size: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-learn-bench-'));
  const store = createStore(openDatabase(join(dir, 'bench.db')));
  store.transaction(() => {
    for (const e of knowledgeBase(size)) store.kb.add(e.question, e.answer, 0);
  });
  store.clients.create('a', DEFAULT_CLIENT_SETTINGS, 0);
  const events = { emit: () => {} } as unknown as Parameters<typeof createProposer>[0]['events'];
  const proposer = createProposer({ store, inTransaction: sqliteInTransaction(store), events, log: () => {} });
  const entries = store.kb.all();
  const times = new Float64Array(REPLIES);
  for (let i = 0; i < REPLIES + 20; i++) {
    const conversationId = `c${i}`;
    store.conversations.create({ id: conversationId, clientId: 'a', channel: 'web', peer: `u${i}`, groupId: null, customerId: `u${i}`, autoReply: 'active', now: i });
    const id = store.messages.insert({
      conversationId, clientId: 'a', eventType: 'website_dialog', msgId: `m${i}`, role: 'customer', fromUserId: `u${i}`, fromUserType: null,
      content: `Hello, I have a question number ${i}: how does it work for my order?`, messageInfo: '{}', createTimestamp: null, receivedAt: i, replyScheduled: true, replyReason: 'scheduled',
    });
    // Half the replies are an entry's answer (a phrasing), half new text (a new entry).
    const content = i % 2 === 0 && entries.length > 0 ? `Hi! ${entries[(i * 7919) % entries.length]!.answer}` : `Thanks for asking: reply ${i} explains the steps in full, one by one.`;
    const start = performance.now();
    proposer.proposeNow({ conversationId, clientId: 'a', replyMsgId: `r${i}`, content, operator: { id: 'op', name: 'Op Erator' }, answered: [{ id, msgId: `m${i}` }], neededHuman: true, now: i });
    // The first 20 warm up (JIT, statement caches) and are not counted.
    if (i >= 20) times[i - 20] = performance.now() - start;
  }
  // The first reply after a knowledge-base edit pays for reading the entries again.
  store.kb.add('Edited just now?', 'An entry added before the next reply.', REPLIES + 20);
  const conversationId = 'after-edit';
  store.conversations.create({ id: conversationId, clientId: 'a', channel: 'web', peer: 'edit', groupId: null, customerId: 'edit', autoReply: 'active', now: 0 });
  const id = store.messages.insert({
    conversationId, clientId: 'a', eventType: 'website_dialog', msgId: 'm-edit', role: 'customer', fromUserId: 'edit', fromUserType: null,
    content: 'And after an edit?', messageInfo: '{}', createTimestamp: null, receivedAt: 0, replyScheduled: true, replyReason: 'scheduled',
  });
  const start = performance.now();
  proposer.proposeNow({ conversationId, clientId: 'a', replyMsgId: 'r-edit', content: 'The answer after an edit.', operator: { id: 'op', name: 'Op Erator' }, answered: [{ id, msgId: 'm-edit' }], neededHuman: true, now: 0 });
  const afterEdit = (performance.now() - start).toFixed(2);
  store.close();
  rmSync(dir, { recursive: true, force: true });
  times.sort();
  const p = (q: number): string => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
  return `| ${size} | ${p(0.5)} | ${p(0.99)} | ${afterEdit} |`;
}

export async function runLearnProposer(): Promise<string> {
  const rows = [`learn-proposer: one operator reply turned into a proposal, ${REPLIES} replies per row (half an entry's answer)`, '| entries | p50 ms | p99 ms | first after an edit, ms |', '|---|---|---|---|'];
  for (const size of [0, 100, 1000, 2000, 10_000]) rows.push(await measure(size));
  return rows.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await runLearnProposer());
