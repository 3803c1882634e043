import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../store/db.ts';
import { createStore } from '../store/index.ts';
import { consoleResume, consoleStop, UNDO_STOP_MS } from './state-commands.ts';

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

test('Undo of a stop puts back the pause it found, with its end: a colleague who took over still holds the bot off', () => {
  const { store, state } = setup();
  store.conversations.setAutoReply('c', 'paused', 600_000);
  consoleStop(store, 'c', ann, 1_000);
  assert.deepEqual(state(), { autoReply: 'stopped', pausedUntil: null, needsHuman: false });
  consoleResume(store, 'c', ann, 3_000, true);
  assert.deepEqual(state(), { autoReply: 'paused', pausedUntil: 600_000, needsHuman: false });
});

test('Undo after the pause it found has ended, or too late, or a plain resume: auto-reply is active', () => {
  const { store, state } = setup();
  store.conversations.setAutoReply('c', 'paused', 2_000);
  consoleStop(store, 'c', ann, 1_000);
  consoleResume(store, 'c', ann, 3_000, true);
  assert.equal(state().autoReply, 'active');
  store.conversations.setAutoReply('c', 'paused', 900_000);
  consoleStop(store, 'c', ann, 10_000);
  consoleResume(store, 'c', ann, 10_000 + UNDO_STOP_MS + 1, true);
  assert.deepEqual([state().autoReply, state().pausedUntil], ['active', null]);
  store.conversations.setAutoReply('c', 'paused', 900_000);
  consoleStop(store, 'c', ann, 50_000);
  consoleResume(store, 'c', ann, 50_001);
  assert.equal(state().autoReply, 'active');
});

test('neither a stop, its Undo, nor a resume takes a customer out of Needs you: only Resolve, a staff message or an operator reply does', () => {
  const { store, state } = setup();
  store.conversations.flagNeedsHuman('c', 500);
  consoleStop(store, 'c', ann, 1_000);
  consoleResume(store, 'c', ann, 2_000, true);
  assert.equal(state().needsHuman, true, 'after Undo');
  consoleStop(store, 'c', ann, 3_000);
  consoleResume(store, 'c', ann, 60_000);
  assert.equal(state().needsHuman, true, 'after a resume');
  assert.equal(store.conversations.byId('c')!.needsHumanSince, 500, 'still waiting since the handoff');
});

test('Undo of a stop of a conversation already stopped leaves it stopped, and writes no "resumed" line', () => {
  const { store, state } = setup();
  store.conversations.setAutoReply('c', 'stopped', null);
  consoleStop(store, 'c', ann, 1_000);
  consoleResume(store, 'c', ann, 2_000, true);
  assert.equal(state().autoReply, 'stopped');
  const lines = store.console.transcript('c', 50).filter((e) => e.kind === 'message').map((e) => e.content);
  assert.deepEqual(lines, ['stop_auto_reply']);
});
