import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from './migrate.ts';
import { MIGRATIONS } from './migrations/index.ts';
import { createStore } from './index.ts';
import { consoleReads } from './console-reads.ts';
import { openDatabase } from './db.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';
import { nicknameOf } from '../conversations/identity.ts';
import { quotedMsgId, quoteTextOf } from './quotes.ts';
import { TRANSCRIPT_TEXT_MAX } from '../../shared/console-api.ts';
import { LIMITS } from '../../shared/protocol/message-schema.ts';

/** The bulk legacy rows carry in an unknown field: it must never come back from a read. */
const BULK = 'B'.repeat(300_000);
const QUOTED = 'Q'.repeat(100_000);

/**
 * A store as version 21 left it, holding what the cap now refuses (12 lines with 300 KB of unknown
 * fields each, one quoting with 100 KB of its own text) and a data: URL file, then migrated.
 */
function legacyStore() {
  const db = new DatabaseSync(':memory:');
  migrate(db, MIGRATIONS, 21);
  db.prepare("INSERT INTO clients (id, created_at, updated_at) VALUES ('acme', 0, 0)").run();
  db.prepare("INSERT INTO conversations (id, client_id, channel, peer, customer_id, created_at, last_message_at) VALUES ('c', 'acme', 'im', 'u:nora', 'nora', 0, 0)").run();
  const insert = db.prepare(
    "INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, from_user_id, content, message_info, received_at) VALUES ('c', 'acme', 'auto_dialog', ?, 'customer', 'nora', ?, ?, ?)",
  );
  const line = (i: number, extra: Record<string, unknown>): void => {
    insert.run(`m${i}`, `line ${i}`, JSON.stringify({ event_type: 'auto_dialog', msg_id: `m${i}`, from_user_id: 'nora', content: `line ${i}`, nickname: ' Nora ', ...extra }), i);
  };
  line(0, {});
  for (let i = 1; i <= 12; i++) line(i, { bulk: BULK, ...(i === 12 ? { message_type: 2, quote: { msg_id: 'm0', message_type: 1, content: QUOTED } } : {}) });
  line(13, { files_info: [{ content: `data:image/png;base64,${'A'.repeat(200_000)}`, file_type: 'image', file_name: 'big.png' }] });
  migrate(db);
  return createStore(db);
}

test('the context read names and quotes from huge stored lines without their bulk', () => {
  const store = legacyStore();
  const context = store.messages.context('c', Number.MAX_SAFE_INTEGER, 20);
  assert.equal(context.length, 14);
  assert.ok(context.every((l) => l.speakerName === 'Nora'), 'named by the alias each line carries');
  const quoting = context.find((l) => l.content === 'line 12')!;
  assert.equal(quoting.quoted?.content.length, LIMITS.contentMaxChars, 'the quote\'s own text is cut as a message text is');
  assert.ok(JSON.stringify(context).length < 30_000, `${JSON.stringify(context).length} characters`);
});

test('the transcript page answers what it shows, cut, and how large each stored line is: never the bulk', async () => {
  const store = legacyStore();
  const page = (await consoleReads(store).transcriptPage('c', 50))!;
  const text = JSON.stringify(page);
  assert.ok(!text.includes('BBBBBBBBBB'), 'unknown fields stay in the store');
  assert.ok(text.length < 40_000, `${text.length} characters`);
  const entry = (msgId: string) => page.entries.find((e) => e.msgId === msgId)!;
  assert.equal(entry('m1').speakerName, 'Nora');
  assert.ok(entry('m1').stored!.bytes > BULK.length, 'the stored size is told');
  assert.deepEqual(entry('m1').stored!.cut, []);
  assert.deepEqual(entry('m12').stored!.cut, ['quote.content']);
  assert.equal((entry('m12').messageInfo!['quote'] as { content: string }).content, QUOTED.slice(0, TRANSCRIPT_TEXT_MAX));
  assert.equal(entry('m12').quoted?.content, 'line 0', 'the quoted message is still found');
  const file = (entry('m13').messageInfo!['files_info'] as Array<Record<string, unknown>>)[0]!;
  assert.deepEqual([file['file_type'], file['file_name'], (file['content'] as string).length], ['image', 'big.png', TRANSCRIPT_TEXT_MAX]);
  assert.deepEqual(entry('m13').stored!.cut, ['files_info[0].content']);
  const whole = (await consoleReads(store).messageInfo(entry('m13').id))!;
  assert.equal(JSON.parse(whole.json).files_info[0].content.length, 'data:image/png;base64,'.length + 200_000, 'the whole is there on demand');
});

test('names, quotes and what the transcript shows are read in SQL as identity.ts and quotes.ts read them in JavaScript', () => {
  const store = createStore(openDatabase(':memory:'));
  store.clients.create('acme', DEFAULT_CLIENT_SETTINGS, 0);
  store.conversations.create({ id: 'c', clientId: 'acme', channel: 'im', peer: 'u:x', groupId: null, customerId: 'x', autoReply: 'active', now: 0 });
  const infos: Array<Record<string, unknown>> = [
    { from_user_nickname: '\u3000\t Nora\u00a0\n', nickname: 'alias' },
    { from_user_nickname: '   ', nickname: 42, nick_name: ' Li ' },
    { from_user_name: `${'😀'.repeat(199)}ab` },
    { from_user_nickname: { not: 'text' } },
    { message_type: 2, quote: { msg_id: 'q1', message_type: 1, content: ' \n ' } },
    { message_type: 2, quote: { msg_id: 'q2', message_type: 1, content: [1] } },
    { message_type: 1, quote: { msg_id: 'q3', message_type: 1, content: 'not quoting' } },
    { message_type: 2, quote: { msg_id: '', message_type: 1 } },
    { message_type: 2, quote: { msg_id: 'q4', message_type: 1, content: `x${'字'.repeat(LIMITS.contentMaxChars)}` } },
  ];
  infos.forEach((info, i) => {
    store.messages.insert({
      conversationId: 'c', clientId: 'acme', eventType: 'auto_dialog', msgId: `p${i}`, role: 'customer', fromUserId: null, fromUserType: 2,
      content: `p${i}`, messageInfo: JSON.stringify(info), createTimestamp: null, receivedAt: i, replyScheduled: null, replyReason: null,
    });
  });
  // Written with the message, and computed at read for a row without it: the same either way.
  for (const shownAtRead of [false, true]) {
    if (shownAtRead) store.connection.exec('UPDATE messages SET shown = NULL');
    const context = store.messages.context('c', Number.MAX_SAFE_INTEGER, 50);
    const entries = store.console.transcript('c', 50);
    infos.forEach((info, i) => {
      const line = context.find((l) => l.content === `p${i}`)!;
      assert.equal(line.speakerName ?? null, nicknameOf(info), `name of ${JSON.stringify(info).slice(0, 60)}`);
      assert.equal(line.quoted?.content ?? null, quotedMsgId(info) && quoteTextOf(info), `quote of p${i}`);
      assert.equal(entries.find((e) => e.msgId === `p${i}`)!.speakerName, nicknameOf(info));
    });
  }
});
