import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../store/db.ts';
import { createStore } from '../store/index.ts';
import { clientSettingsSchema, type ClientSettings } from '../../shared/client-settings.ts';
import type { MessageInfo } from '../../shared/protocol/message-schema.ts';
import { executeWrite, type Outcome } from './write-commands.ts';
import { consoleStop } from './state-commands.ts';

const ann = { id: 'ann', name: 'Ann Lee' };
const T = 1_800_000_000_000;

function setup(settings: Partial<ClientSettings> = {}) {
  const store = createStore(openDatabase(join(mkdtempSync(join(tmpdir(), 'sb-write-')), 's.db')));
  store.connection.prepare("INSERT INTO clients (id, created_at, updated_at) VALUES ('a', 0, 0)").run();
  const parsed = clientSettingsSchema.parse({ boundAccount: 'shop-bot', ...settings });
  let n = 0;
  /** One message through the writer's command, as ingest sends it. */
  const ingest = async (kind: 'auto_dialog' | 'cmd_dialog', info: Omit<MessageInfo, 'event_type' | 'msg_id'>, now: number): Promise<Extract<Outcome, { kind: 'ok' }>> => {
    const full = { event_type: kind, msg_id: `m${++n}`, ...info } as MessageInfo;
    const text = JSON.stringify(full);
    const request = { requestId: `req${n}`, clientId: 'a', settings: parsed, info: full, canonicalInfo: text, contentHash: `h${n}`, signature: `s${n}`, now };
    const outcome = await executeWrite(store, { kind, request });
    assert.equal(outcome?.kind, 'ok');
    return outcome as Extract<Outcome, { kind: 'ok' }>;
  };
  const customer = (from: string, now: number, extra: Partial<MessageInfo> = {}) => ingest('auto_dialog', { from_user_id: from, from_user_type: 2, content: 'hello?', ...extra }, now);
  const flag = (conversationId: string) => {
    const c = store.conversations.byId(conversationId)!;
    return { needsHuman: c.needsHuman, since: c.needsHumanSince };
  };
  return { store, ingest, customer, flag };
}

const reasonOf = (o: Extract<Outcome, { kind: 'ok' }>): unknown => (JSON.parse(o.body) as { reply: { reason: string } }).reply.reason;

test('a customer writing while auto-reply is stopped enters Needs you, with one alert; the response is as before', async () => {
  const { store, customer, flag } = setup();
  const first = await customer('dave', T);
  assert.equal(first.alert, undefined, 'answered by the bot: nothing to flag');
  await consoleStop(store, first.conversationId, ann, T + 1_000);
  const waiting = await customer('dave', T + 5_000);
  assert.equal(waiting.alert, 'customer_waiting');
  assert.deepEqual(flag(waiting.conversationId), { needsHuman: true, since: T + 5_000 });
  // Section 6, unchanged: no field added, the reason as it was.
  assert.deepEqual(JSON.parse(waiting.body), {
    request_id: 'req2',
    event_type: 'auto_dialog',
    conversation_id: waiting.conversationId,
    msg_id: 'm2',
    auto_reply: 'stopped',
    reply: { scheduled: false, reason: 'auto_reply_stopped' },
  });
  const again = await customer('dave', T + 9_000);
  assert.equal(again.alert, undefined, 'already flagged: no second alert');
  assert.deepEqual(flag(waiting.conversationId), { needsHuman: true, since: T + 5_000 }, 'waiting since the first');
});

test('held off by the console (its stop, an operator reply) a customer message flags; held off by staff in the IM (cmd_dialog, a staff line) it does not', async () => {
  const { store, ingest, customer, flag } = setup();
  // The integration's own stop: staff took the conversation over in the IM and see the message there.
  await ingest('cmd_dialog', { from_user_id: 'erin', content: 'stop_auto_reply' }, T);
  const stopped = await customer('erin', T + 1_000);
  assert.deepEqual([reasonOf(stopped), stopped.alert, flag(stopped.conversationId).needsHuman], ['auto_reply_stopped', undefined, false]);
  // A stop from the console: the console has it, and must say a customer waits.
  const dan = (await customer('dan', T)).conversationId;
  await consoleStop(store, dan, ann, T + 500);
  const consoleStopped = await customer('dan', T + 1_000);
  assert.deepEqual([reasonOf(consoleStopped), consoleStopped.alert], ['auto_reply_stopped', 'customer_waiting']);

  // Staff answer in the IM: a pause, and the customer's next line is theirs to answer.
  await customer('fay', T);
  const staff = await ingest('auto_dialog', { from_user_id: 'agent-7', from_user_type: 3, to_user_id: 'fay', content: 'on it' }, T + 1_000);
  assert.equal(staff.alert, undefined, 'a staff message flags nothing');
  const paused = await customer('fay', T + 2_000);
  assert.deepEqual([reasonOf(paused), paused.alert, flag(paused.conversationId).needsHuman], ['auto_reply_paused', undefined, false]);

  // An operator reply from the console pauses for 10 minutes and clears the flag; the customer's answer flags it again.
  const gus = (await customer('gus', T)).conversationId;
  store.conversations.flagNeedsHuman(gus, T, 'handoff');
  await executeWrite(store, { kind: 'operator_reply', conversationId: gus, clientId: 'a', operator: ann, replyMsgId: 'r1', content: 'Hi Gus', replyTo: [], sendUrl: 'http://127.0.0.1:9/hook', messageInfo: '{}', pauseMs: 600_000, now: T + 1_000 });
  assert.equal(flag(gus).needsHuman, false);
  const afterReply = await customer('gus', T + 60_000);
  assert.deepEqual([reasonOf(afterReply), afterReply.alert], ['auto_reply_paused', 'customer_waiting']);
  assert.deepEqual(flag(gus), { needsHuman: true, since: T + 60_000 });
  // Staff then answer in the IM: theirs again, so the next line does not flag.
  store.conversations.clearNeedsHuman(gus);
  await ingest('auto_dialog', { from_user_id: 'agent-7', from_user_type: 3, to_user_id: 'gus', content: 'taking this one' }, T + 70_000);
  const afterStaff = await customer('gus', T + 80_000);
  assert.deepEqual([reasonOf(afterStaff), afterStaff.alert], ['auto_reply_paused', undefined]);
  // Once the pause has run out the bot answers again: nothing to flag.
  const later = await customer('gus', T + 70_000 + 600_001);
  assert.deepEqual([reasonOf(later), later.alert, flag(gus).needsHuman], ['scheduled', undefined, false]);
});

test('messages not answered for any other reason do not flag: staff, not mentioned, stale, rate limited', async () => {
  const { store, ingest, customer, flag } = setup();
  // All in a stopped conversation (or group), where a customer's plain message would flag.
  const group = { group_id: 'grp-1' };
  const g = (await customer('hal', T, { ...group, at_list: ['shop-bot'] })).conversationId;
  await consoleStop(store, g, ann, T + 1_000);
  const notMentioned = await customer('hal', T + 2_000, group);
  assert.deepEqual([reasonOf(notMentioned), notMentioned.alert], ['not_mentioned', undefined]);
  const staff = await ingest('auto_dialog', { ...group, from_user_id: 'shop-bot', from_user_type: 1, content: 'noted' }, T + 3_000);
  assert.deepEqual([reasonOf(staff), staff.alert], ['sender_not_customer', undefined]);
  const stale = await customer('hal', T + 4_000, { ...group, at_list: ['shop-bot'], create_timestamp: Math.floor((T - 3_600_000) / 1000) });
  assert.deepEqual([reasonOf(stale), stale.alert], ['stale_message', undefined]);
  assert.equal(flag(g).needsHuman, false);

  // Six auto replies this minute: the seventh message waits for the cap, not for a human.
  const ivy = (await customer('ivy', T)).conversationId;
  for (let i = 0; i < 6; i++) {
    store.messages.insertReply({ conversationId: ivy, kind: 'auto', msgId: `r-${i}`, replyTo: [], afterMessageId: 1, content: 'ok', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: T + i });
  }
  const capped = await customer('ivy', T + 10_000);
  assert.deepEqual([reasonOf(capped), capped.alert, flag(ivy).needsHuman], ['rate_limited', undefined, false]);
});

test('a flag already set stays as it was: since the first reason, no new alert', async () => {
  const { store, customer, flag } = setup();
  const id = (await customer('jo', T)).conversationId;
  store.conversations.flagNeedsHuman(id, T + 10, 'handoff');
  await consoleStop(store, id, ann, T + 1_000);
  const o = await customer('jo', T + 2_000);
  assert.equal(o.alert, undefined);
  assert.deepEqual(flag(id), { needsHuman: true, since: T + 10 });
});
