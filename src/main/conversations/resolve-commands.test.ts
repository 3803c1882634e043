import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../store/db.ts';
import { createStore } from '../store/index.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';
import { manualClock } from '../../shared/clock.ts';
import { newId } from '../store/ids.ts';
import { TRANSCRIPT_TEXT_MAX } from '../../shared/console-api.ts';
import { executeWorkspaceCommand, type WorkspaceResult } from './workspace-commands.ts';
import { UNDO_RESOLVE_MS } from './resolve-commands.ts';

const ann = { id: 'ann', name: 'Ann Lee' };
const bo = { id: 'bo', name: 'Bo' };

/** Three customers waiting in Needs you, flagged a minute apart: alice first, then bob, then carol. */
function queue() {
  const store = createStore(openDatabase(join(mkdtempSync(join(tmpdir(), 'sb-undo-resolve-')), 's.db')));
  const clock = manualClock();
  store.clients.create('a', DEFAULT_CLIENT_SETTINGS, clock.now());
  const say = (conversationId: string, role: 'customer' | 'staff', content: string): number => {
    const id = store.messages.insert({
      conversationId, clientId: 'a', eventType: 'auto_dialog', msgId: newId('message'), role, fromUserId: role === 'customer' ? conversationId : 'agent', fromUserType: role === 'customer' ? 2 : 3,
      content, messageInfo: '{}', createTimestamp: null, receivedAt: clock.now(), replyScheduled: null, replyReason: null,
    });
    if (role === 'customer') store.conversations.touchCustomer(conversationId, clock.now());
    return id;
  };
  for (const who of ['alice', 'bob', 'carol']) {
    store.conversations.create({ id: who, clientId: 'a', channel: 'im', peer: `u:${who}`, groupId: null, customerId: who, autoReply: 'active', now: clock.now() });
    say(who, 'customer', `${who} needs a person`);
    store.conversations.flagNeedsHuman(who, clock.now(), 'handoff');
    clock.advance(60_000);
  }
  const run = (c: Parameters<typeof executeWorkspaceCommand>[1]): Promise<WorkspaceResult | null> => store.transactionAsync(() => executeWorkspaceCommand(store, c));
  const resolve = (id: string, operator = ann) => run({ kind: 'resolve', conversationId: id, operator, now: clock.now() });
  const undo = (id: string, resolvedAt: number, operator = ann) => run({ kind: 'undo_resolve', conversationId: id, resolvedAt, operator, now: clock.now() });
  const needsYou = () => store.console.conversations({ view: 'needs_you', limit: 10, now: clock.now() }).items.map((c) => c.id);
  const row = (id: string) => {
    const c = store.conversations.byId(id)!;
    return { needsHuman: c.needsHuman, needsHumanSince: c.needsHumanSince, resolvedAt: c.resolvedAt, resolvedBy: c.resolvedBy };
  };
  const lines = (id: string) => store.console.transcript(id, 100).filter((e) => e.role === 'command').map((e) => [e.content, (e.messageInfo?.['operator'] as { name?: string } | undefined)?.name]);
  /** Everything an Undo may write: a refusal must leave all of it as it was. */
  const snapshot = (id: string) => ({ row: row(id), lines: lines(id), audit: store.audit.list(id, 100).length, list: needsYou() });
  return { store, clock, say, resolve, undo, needsYou, row, lines, snapshot };
}

const resolvedAtOf = (r: WorkspaceResult | null): number => {
  assert.equal(r?.kind, 'resolved');
  assert.equal(r.kind === 'resolved' && r.undoable, true, 'it took the conversation out of Needs you');
  return r.kind === 'resolved' ? r.resolvedAt : NaN;
};

test('Undo of a Resolve puts the conversation back in Needs you at its old place, with the resolve before it, and says so in the transcript', async () => {
  const { store, clock, resolve, undo, needsYou, row, lines } = queue();
  const since = row('bob').needsHumanSince;
  // Bob was handled once before: Undo brings back that earlier resolve, not an empty one.
  store.conversations.resolve('bob', 1_000, 'Bo');
  store.conversations.flagNeedsHuman('bob', since!, 'handoff');
  assert.deepEqual(needsYou(), ['alice', 'bob', 'carol']);
  const at = resolvedAtOf(await resolve('bob'));
  assert.deepEqual(needsYou(), ['alice', 'carol']);
  clock.advance(4_000);
  const r = await undo('bob', at);
  assert.deepEqual(r, { kind: 'resolve_undone', needsHumanSince: since, resolvedAt: 1_000, resolvedBy: 'Bo' });
  assert.deepEqual(row('bob'), { needsHuman: true, needsHumanSince: since, resolvedAt: 1_000, resolvedBy: 'Bo' });
  assert.deepEqual(needsYou(), ['alice', 'bob', 'carol'], 'its place in the queue, not the end');
  assert.deepEqual(lines('bob'), [['resolve', 'Ann Lee'], ['undo_resolve', 'Ann Lee']]);
  assert.deepEqual(store.console.conversation('bob')!.lastCommand, { command: 'undo_resolve', source: 'console', operator: 'Ann Lee' }, 'the list previews the line');
  const audit = store.audit.list('bob', 1)[0]!;
  assert.deepEqual([audit.action, audit.operator, JSON.parse(audit.detail!)], ['resolve', ann, { undo: true, resolved_at: at, needs_human_since: since }]);
});

test('a bot reply made after the Resolve does not stop its Undo: no person wrote', async () => {
  const { store, resolve, undo, needsYou } = queue();
  const at = resolvedAtOf(await resolve('alice'));
  store.messages.insertReply({ conversationId: 'alice', kind: 'auto', msgId: 'r1', replyTo: [], afterMessageId: store.workspace.latestMessageId('alice'), content: 'A fallback', handoff: true, engine: 'kb', confidence: null, sources: [], createdAt: at });
  assert.equal((await undo('alice', at))?.kind, 'resolve_undone');
  assert.deepEqual(needsYou(), ['alice', 'bob', 'carol']);
});

/** Each case: what happens after the Resolve, and the refusal its Undo gets. */
const refusals: Array<[string, 'expired' | 'already_undone' | 'needs_you_again' | 'resolved_again' | 'changed', (q: ReturnType<typeof queue>, at: number) => unknown]> = [
  ['the window has passed', 'expired', (q) => q.clock.advance(UNDO_RESOLVE_MS + 1)],
  ['it was undone already', 'already_undone', async (q, at) => assert.equal((await q.undo('bob', at))?.kind, 'resolve_undone')],
  ['a new customer message flagged it again', 'needs_you_again', (q) => {
    q.clock.advance(1_000);
    q.say('bob', 'customer', 'hello again?');
    q.store.conversations.flagNeedsHuman('bob', q.clock.now(), 'handoff');
  }],
  ['a colleague resolved it again', 'resolved_again', async (q) => {
    q.clock.advance(1_000);
    await q.resolve('bob', bo);
  }],
  ['staff answered in the IM', 'changed', (q) => q.say('bob', 'staff', 'Sorted, thanks!')],
  ['the customer wrote and the bot answered (no flag)', 'changed', (q) => q.say('bob', 'customer', 'never mind, found it')],
  ['an operator replied from the console', 'changed', (q) => {
    q.store.messages.insertReply({ conversationId: 'bob', kind: 'operator', msgId: 'op1', replyTo: [], afterMessageId: q.store.workspace.latestMessageId('bob'), content: 'On it', handoff: false, engine: 'operator', confidence: null, sources: [], operator: ann, createdAt: q.clock.now() });
  }],
];

for (const [what, reason, meanwhile] of refusals) {
  test(`Undo of a Resolve is refused and changes nothing when ${what}`, async () => {
    const q = queue();
    const at = resolvedAtOf(await q.resolve('bob'));
    q.clock.advance(2_000);
    await meanwhile(q, at);
    const before = q.snapshot('bob');
    const r = await q.undo('bob', at);
    assert.equal(r?.kind, 'undo_refused');
    assert.equal(r.kind === 'undo_refused' && r.reason, reason);
    assert.match(r.kind === 'undo_refused' ? r.message : '', /\S/);
    assert.deepEqual(q.snapshot('bob'), before);
  });
}

test('there is no Undo for a Resolve that took nothing out of Needs you, or for a time no Resolve was made', async () => {
  const { resolve, undo, clock, snapshot } = queue();
  const at = resolvedAtOf(await resolve('carol'));
  clock.advance(1_000);
  const again = await resolve('carol');
  assert.deepEqual(again, { kind: 'resolved', resolvedAt: clock.now(), undoable: false });
  const before = snapshot('carol');
  for (const when of [clock.now(), at - 1]) {
    const r = await undo('carol', when);
    assert.equal(r?.kind === 'undo_refused' && r.reason, 'unavailable', String(when));
  }
  assert.deepEqual(snapshot('carol'), before);
  assert.equal(await undo('nobody', at), null, 'no such conversation');
});

test('"Needs a human" by hand puts a resolved conversation at the end of Needs you with a line and an audit; flagging it again keeps its place and writes nothing', async () => {
  const q = queue();
  await q.resolve('alice');
  q.clock.advance(1000);
  const flag = (id: string, note: string | null = null) => q.store.transactionAsync(() => executeWorkspaceCommand(q.store, { kind: 'flag', conversationId: id, note, operator: bo, now: q.clock.now() }));
  const at = q.clock.now();
  assert.deepEqual(await flag('alice', 'refund over 500, for Chen'), { kind: 'flagged', needsHumanSince: at, already: false });
  assert.deepEqual(q.needsYou(), ['bob', 'carol', 'alice'], 'it joins the end of the queue');
  assert.equal(q.row('alice').needsHumanSince, at);
  const line = q.store.console.transcript('alice', 100).at(-1)!;
  const info = line.messageInfo;
  assert.deepEqual([info?.['event_type'], 'content' in line && line.content, info?.['note'], (info?.['operator'] as { name: string }).name], ['cmd_dialog', 'flag_human', 'refund over 500, for Chen', 'Bo']);
  assert.deepEqual(q.store.console.conversation('alice')!.lastCommand, { command: 'flag_human', source: 'console', operator: 'Bo', note: 'refund over 500, for Chen' }, 'the list previews the line and its note');
  const audit = q.store.audit.list('alice', 10)[0]!;
  assert.deepEqual([audit.action, audit.operator.name, audit.detail], ['flag', 'Bo', JSON.stringify({ note: 'refund over 500, for Chen' })]);

  // Already in Needs you: it keeps the wait it had; no second line, no audit.
  const before = q.snapshot('bob');
  q.clock.advance(1000);
  assert.deepEqual(await flag('bob'), { kind: 'flagged', needsHumanSince: before.row.needsHumanSince!, already: true });
  assert.deepEqual(q.snapshot('bob'), before);
  assert.deepEqual(q.needsYou(), ['bob', 'carol', 'alice']);
  assert.equal(await flag('nobody'), null);
});

test('the list previews a flag line\'s note cut as the transcript cuts it, however long the stored note', async () => {
  const q = queue();
  await q.resolve('alice'); // out of Needs you, so the flag writes its line
  const long = 'n'.repeat(TRANSCRIPT_TEXT_MAX + 500);
  await q.store.transactionAsync(() => executeWorkspaceCommand(q.store, { kind: 'flag', conversationId: 'alice', note: long, operator: bo, now: q.clock.now() }));
  assert.equal(q.store.console.conversation('alice')!.lastCommand?.note, long.slice(0, TRANSCRIPT_TEXT_MAX));
});
