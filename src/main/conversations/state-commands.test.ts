import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../store/db.ts';
import { createStore } from '../store/index.ts';
import { consoleResume, consoleStop, stopConversation, UNDO_STOP_MS } from './state-commands.ts';

const ann = { id: 'ann', name: 'Ann Lee' };

function setup() {
  const store = createStore(openDatabase(join(mkdtempSync(join(tmpdir(), 'sb-state-')), 's.db')));
  store.connection.prepare("INSERT INTO clients (id, created_at, updated_at) VALUES ('a', 0, 0)").run();
  store.conversations.create({ id: 'c', clientId: 'a', channel: 'im', peer: 'u:dave', groupId: null, customerId: 'dave', autoReply: 'active', now: 0 });
  const state = () => {
    const c = store.conversations.byId('c')!;
    return { autoReply: c.autoReply, pausedUntil: c.pausedUntil, needsHuman: c.needsHuman };
  };
  return { store, state };
}

test('Undo of a stop puts back the pause it found, with its end: a colleague who took over still holds the bot off', async () => {
  const { store, state } = setup();
  store.conversations.setAutoReply('c', 'paused', 600_000);
  await consoleStop(store, 'c', ann, 1_000);
  assert.deepEqual(state(), { autoReply: 'stopped', pausedUntil: null, needsHuman: false });
  await consoleResume(store, 'c', ann, 3_000, true);
  assert.deepEqual(state(), { autoReply: 'paused', pausedUntil: 600_000, needsHuman: false });
});

test('Undo after the pause it found has ended, or a plain resume: auto-reply is active; an Undo too late changes nothing', async () => {
  const { store, state } = setup();
  store.conversations.setAutoReply('c', 'paused', 2_000);
  await consoleStop(store, 'c', ann, 1_000);
  assert.equal((await consoleResume(store, 'c', ann, 3_000, true))?.undo, 'undone');
  assert.equal(state().autoReply, 'active');
  store.conversations.setAutoReply('c', 'paused', 900_000);
  await consoleStop(store, 'c', ann, 10_000);
  assert.equal((await consoleResume(store, 'c', ann, 10_000 + UNDO_STOP_MS + 1, true))?.undo, 'expired');
  assert.deepEqual([state().autoReply, state().pausedUntil], ['stopped', null], 'too late: r resumes, an Undo does not');
  store.conversations.setAutoReply('c', 'paused', 900_000);
  await consoleStop(store, 'c', ann, 50_000);
  await consoleResume(store, 'c', ann, 50_001);
  assert.equal(state().autoReply, 'active');
});

test('neither a stop, its Undo, nor a resume takes a customer out of Needs you: only Resolve, a staff message or an operator reply does', async () => {
  const { store, state } = setup();
  store.conversations.flagNeedsHuman('c', 500, 'handoff');
  await consoleStop(store, 'c', ann, 1_000);
  await consoleResume(store, 'c', ann, 2_000, true);
  assert.equal(state().needsHuman, true, 'after Undo');
  await consoleStop(store, 'c', ann, 3_000);
  await consoleResume(store, 'c', ann, 60_000);
  assert.equal(state().needsHuman, true, 'after a resume');
  assert.equal(store.conversations.byId('c')!.needsHumanSince, 500, 'still waiting since the handoff');
});

test('Undo of a stop of a conversation already stopped leaves it stopped, and writes no "resumed" line', async () => {
  const { store, state } = setup();
  store.conversations.setAutoReply('c', 'stopped', null);
  await consoleStop(store, 'c', ann, 1_000);
  await consoleResume(store, 'c', ann, 2_000, true);
  assert.equal(state().autoReply, 'stopped');
  const lines = store.console.transcript('c', 50).filter((e) => e.kind === 'message').map((e) => e.content);
  assert.deepEqual(lines, ['stop_auto_reply']);
});

/** A customer message of conversation c waiting for its auto reply, as ingest stores it. */
function waiting(store: ReturnType<typeof setup>['store'], msgId: string, receivedAt: number): number {
  return store.messages.insert({
    conversationId: 'c',
    clientId: 'a',
    eventType: 'auto_dialog',
    msgId,
    role: 'customer',
    fromUserId: 'dave',
    fromUserType: 2,
    content: msgId,
    messageInfo: JSON.stringify({ event_type: 'auto_dialog', msg_id: msgId, from_user_id: 'dave', content: msgId }),
    createTimestamp: null,
    receivedAt,
    replyScheduled: true,
    replyReason: 'scheduled',
  });
}

test('Undo of a stop made in the quiet period puts the waiting messages back to pending, with their reason, for the scheduler', async () => {
  const { store } = setup();
  const first = waiting(store, 'm1', 500);
  const second = waiting(store, 'm2', 800);
  await consoleStop(store, 'c', ann, 1_000);
  assert.deepEqual(store.messages.replyTrace(first), { scheduled: true, reason: 'scheduled', outcome: 'cancelled', replyMsgId: null, note: 'auto-reply stopped by the console before the reply was made' });
  assert.deepEqual(store.messages.pendingReplies('c'), []);
  const undo = await consoleResume(store, 'c', ann, 3_000, true);
  assert.deepEqual(undo?.rescheduled, { clientId: 'a', receivedAt: [500, 800] }, 'each at its own arrival: the quiet period it had');
  for (const id of [first, second]) {
    assert.deepEqual(store.messages.replyTrace(id), { scheduled: true, reason: 'scheduled', outcome: 'pending', replyMsgId: null, note: null }, 'as before the stop');
  }
  // What the scheduler loads at start-up: a restart after the Undo answers them too.
  assert.deepEqual(store.messages.pendingReplies().map((p) => p.msgId), ['m1', 'm2']);
  const resume = store.audit.list('c', 1)[0]!;
  assert.deepEqual(JSON.parse(resume.detail!), { previous: 'stopped', undo: true, restored_replies: 0, restored_messages: 2 });
});

test('Undo puts back only what its own stop cancelled: not an earlier stop\'s, not cmd_dialog\'s, not too late, not on a plain resume', async () => {
  const { store } = setup();
  const outcome = (id: number) => store.messages.replyTrace(id)!.outcome;
  // An earlier console stop, resumed plainly: its message stays cancelled.
  const earlier = waiting(store, 'earlier', 500);
  await consoleStop(store, 'c', ann, 1_000);
  assert.equal((await consoleResume(store, 'c', ann, 2_000))?.rescheduled ?? null, null, 'a plain resume puts nothing back');
  assert.equal(outcome(earlier), 'cancelled');
  // cmd_dialog's stop_auto_reply (the integrator's), then a console stop and its Undo.
  const byCommand = waiting(store, 'by-command', 2_500);
  await stopConversation(store, 'c', 3_000, 'stop_auto_reply');
  await consoleResume(store, 'c', ann, 3_200);
  const mine = waiting(store, 'mine', 3_500);
  await consoleStop(store, 'c', ann, 4_000);
  const undo = await consoleResume(store, 'c', ann, 5_000, true);
  assert.deepEqual(undo?.rescheduled, { clientId: 'a', receivedAt: [3_500] });
  assert.deepEqual([outcome(earlier), outcome(byCommand), outcome(mine)], ['cancelled', 'cancelled', 'pending']);
  // A second Undo of the same stop finds nothing more to put back.
  assert.equal((await consoleResume(store, 'c', ann, 5_500, true))?.rescheduled ?? null, null);
  // Too late: UNDO_STOP_MS after the stop, its message stays cancelled.
  const late = waiting(store, 'late', 9_000);
  await consoleStop(store, 'c', ann, 10_000);
  assert.equal((await consoleResume(store, 'c', ann, 10_000 + UNDO_STOP_MS + 1, true))?.rescheduled ?? null, null);
  assert.equal(outcome(late), 'cancelled');
  // A message settled otherwise after the stop (a reply already made) keeps that fate.
  const settled = waiting(store, 'settled', 30_000);
  await consoleStop(store, 'c', ann, 31_000);
  store.connection.prepare("UPDATE messages SET reply_outcome = 'answered', reply_note = NULL WHERE id = ?").run(settled);
  assert.equal((await consoleResume(store, 'c', ann, 32_000, true))?.rescheduled ?? null, null);
  assert.equal(outcome(settled), 'answered');
});

/** A line of conversation c from the IM: staff speaking there, or the integration's stop_auto_reply. */
function fromIm(store: ReturnType<typeof setup>['store'], role: 'staff' | 'command', receivedAt: number): number {
  const content = role === 'staff' ? 'I will take this one' : 'stop_auto_reply';
  const eventType = role === 'staff' ? 'auto_dialog' : 'cmd_dialog';
  return store.messages.insert({
    conversationId: 'c',
    clientId: 'a',
    eventType,
    msgId: `${role}-${receivedAt}`,
    role,
    fromUserId: role === 'staff' ? 'shop-bot' : null,
    fromUserType: role === 'staff' ? 3 : null,
    content,
    messageInfo: JSON.stringify({ event_type: eventType, msg_id: `${role}-${receivedAt}`, content }),
    createTimestamp: null,
    receivedAt,
    replyScheduled: null,
    replyReason: null,
  });
}

test('Undo after a colleague spoke in the IM during the stop: their message holds the bot off as it would have (paused from then), it is not woken', async () => {
  const { store, state } = setup();
  waiting(store, 'm1', 500);
  await consoleStop(store, 'c', ann, 1_000);
  // While stopped a staff message leaves the state alone (ingest): without the stop it would have paused it.
  fromIm(store, 'staff', 2_000);
  await consoleResume(store, 'c', ann, 3_000, true);
  assert.deepEqual([state().autoReply, state().pausedUntil], ['paused', 2_000 + 10 * 60_000]);
});

test('Undo of a stop already undone, or resumed since, changes nothing: a colleague\'s pause since holds', async () => {
  const { store, state } = setup();
  await consoleStop(store, 'c', ann, 1_000);
  await consoleResume(store, 'c', ann, 2_000, true);
  assert.equal(state().autoReply, 'active');
  // A colleague speaks in the IM: paused (as ingest does); then the same Undo comes again (a second click, a retried request).
  store.conversations.setAutoReply('c', 'paused', 600_000);
  await consoleResume(store, 'c', ann, 3_000, true);
  assert.deepEqual([state().autoReply, state().pausedUntil], ['paused', 600_000]);
  const lines = store.console.transcript('c', 50).filter((e) => e.kind === 'message').map((e) => e.content);
  assert.deepEqual(lines, ['stop_auto_reply', 'resume_auto_reply'], 'no second "resumed" line');
});

test('Undo after the integration\'s own stop_auto_reply leaves auto-reply stopped: the integration asked for it', async () => {
  const { store, state } = setup();
  await consoleStop(store, 'c', ann, 1_000);
  await stopConversation(store, 'c', 2_000, 'stop_auto_reply');
  fromIm(store, 'command', 2_000);
  await consoleResume(store, 'c', ann, 3_000, true);
  assert.equal(state().autoReply, 'stopped');
});

test('Undo after an operator replied from the console during the stop: paused from that reply, as the reply would have', async () => {
  const { store, state } = setup();
  await consoleStop(store, 'c', ann, 1_000);
  store.messages.insertReply({ conversationId: 'c', kind: 'operator', msgId: 'op-1', replyTo: [], afterMessageId: store.workspace.latestMessageId('c'), content: 'On it', handoff: false, engine: 'operator', confidence: null, sources: [], operator: { id: 'bob', name: 'Bob' }, createdAt: 2_500 });
  await consoleResume(store, 'c', ann, 3_000, true);
  assert.deepEqual([state().autoReply, state().pausedUntil], ['paused', 2_500 + 10 * 60_000]);
});
