import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { listen, signedInAgent, teamConsole, type TeamConsole } from './helpers/team.ts';
import type { ConsoleEvent, ConversationSummary } from '../src/shared/console-api.ts';
import { consoleTokenAtStart } from '../src/main/console-api/console-token.ts';
import { secretKeyPath } from '../src/main/store/data-dir.ts';

type Of<T extends ConsoleEvent['type']> = Extract<ConsoleEvent, { type: T }>;
const is = <T extends ConsoleEvent['type']>(type: T, f: (e: Of<T>) => boolean = () => true) => (e: ConsoleEvent): e is Of<T> => e.type === type && f(e as Of<T>);

/** The team workflow over HTTP, as two agents' consoles use it: assignment, routing, collisions, notes, unread. */
describe('team workflow over the console API, two agents at once', () => {
  let h: Harness;
  let server: Server;
  let base: string;
  let ann: TeamConsole;
  let omar: TeamConsole;
  const visit = (visitor: string, content: string) =>
    h.post({ event_type: 'website_dialog', msg_id: mid('web'), from_user_id: visitor, nickname: `Visitor ${visitor}`, content });
  const idOf = async (c: TeamConsole, visitor: string): Promise<string> => (await c.ok('listConversations', { search: visitor })).items[0]!.id;
  const row = async (c: TeamConsole, id: string): Promise<ConversationSummary> => (await c.ok('getConversations', { ids: [id] }))[0]!;

  before(async () => {
    h = await startHarness({ clockStart: Date.now() });
    h.addClient('acme', { sendUrl: 'http://127.0.0.1:9/hook' });
    h.admin.accounts.setOwner({ id: 'boss', name: 'Boss', now: h.clock.now() });
    ({ server, base } = await listen(h.service));
    ann = await teamConsole(base, await signedInAgent(base, h.admin, 'ann', 'Ann', h.clock.now()));
    omar = await teamConsole(base, await signedInAgent(base, h.admin, 'omar', 'Omar', h.clock.now()));
  });
  after(async () => {
    await ann?.close();
    await omar?.close();
    server?.closeAllConnections();
    server?.close();
    await h?.stop();
  });

  it('a handoff goes to one online agent, who alone hears "assigned to you"; Mine and Unassigned follow', async () => {
    const team = await ann.ok('listTeam');
    assert.equal(team.teamMode, true);
    assert.deepEqual(team.members.map((m) => [m.id, m.presence]), [['ann', 'online'], ['boss', 'offline'], ['omar', 'online']]);
    assert.equal((await visit('v1', 'I need a person')).status, 200);
    await h.quiesce();
    const id = await idOf(ann, 'v1');
    const event = await ann.next(is('assigned', (e) => e.conversationId === id));
    assert.equal(event.assignee, 'ann', 'equal load: the first by id');
    assert.equal(event.by, null);
    assert.equal(event.said, 'I need a person');
    assert.equal(omar.events.some(is('assigned')), false, "not Omar's to hear");
    assert.equal([...ann.events, ...omar.events].some(is('alert', (e) => e.conversationId === id)), false, 'no queue alert for what has an owner');
    assert.deepEqual((await ann.ok('listConversations', { assignment: 'mine' })).items.map((c) => c.id), [id]);
    assert.deepEqual((await omar.ok('listConversations', { assignment: 'mine' })).items, []);
    assert.deepEqual((await omar.ok('listConversations', { assignment: 'unassigned' })).items, []);
    assert.equal((await row(omar, id)).assignee, 'ann');
    assert.deepEqual((await omar.ok('listConversations', { view: 'needs_you' })).items, [], "Needs you is Omar's own: Ann has this one");
  });

  it('Omar sees "Ann is typing"; a reply drafted before the customer wrote again gets 409 with what arrived, and nothing is sent', async () => {
    const id = await idOf(ann, 'v1');
    const before = await omar.ok('getTranscript', { conversationId: id });
    const base = {
      messageId: Math.max(...before.entries.filter((e) => e.kind === 'message').map((e) => e.id)),
      replyId: Math.max(0, ...before.entries.filter((e) => e.kind !== 'message' && e.kind !== 'note').map((e) => e.id)),
    };
    await ann.ok('heartbeat', { viewing: id, typing: id });
    const typing = await omar.next(is('activity', (e) => e.conversationId === id && e.typing.includes('ann')));
    assert.deepEqual(typing.viewing, ['ann']);
    assert.equal((await visit('v1', 'Hello? Anyone?')).status, 200);
    await h.quiesce();
    const refused = await omar.call('sendReply', { conversationId: id, content: 'Hi, Omar here', base });
    assert.equal(refused.status, 409);
    assert.ok(!refused.body.ok);
    assert.equal(refused.body.error.code, 'conversation_changed');
    assert.deepEqual(refused.body.error.arrived?.map((a) => [a.kind, a.role, a.by, a.text]), [['message', 'customer', 'Visitor v1', 'Hello? Anyone?']]);
    const after = await omar.ok('getTranscript', { conversationId: id });
    assert.equal(after.entries.some((e) => e.content === 'Hi, Omar here'), false, 'nothing stored');
    assert.equal(h.service.store.deliveries.countByState().pending, 0, 'nothing sent');
    // Ann replies first; Omar, who saw the customer's line, still has not seen hers.
    const annBase = { messageId: Math.max(...after.entries.filter((e) => e.kind === 'message').map((e) => e.id)), replyId: base.replyId };
    await ann.ok('sendReply', { conversationId: id, content: 'Ann here, one moment', base: annBase });
    const again = await omar.call('sendReply', { conversationId: id, content: 'Hi, Omar here', base: annBase });
    assert.equal(again.status, 409);
    assert.deepEqual(!again.body.ok && again.body.error.arrived?.map((a) => [a.kind, a.by, a.text]), [['reply', 'Ann', 'Ann here, one moment']]);
    const sent = await omar.call('sendReply', { conversationId: id, content: 'Hi, Omar here', base: annBase, force: true });
    assert.equal(sent.status, 200, 'send anyway');
    assert.equal((await row(omar, id)).assignee, 'ann', 'a reply does not take a conversation that has someone');
  });

  it('a note with @omar is never delivered and alerts Omar only; the transcript shows it as a note', async () => {
    const id = await idOf(ann, 'v1');
    const deliveries = h.service.store.deliveries.countByState();
    const note = await ann.ok('addNote', { conversationId: id, content: '@omar can you check the refund? @nobody' });
    assert.deepEqual(note.mentioned, ['omar']);
    const mention = await omar.next(is('mention', (e) => e.noteId === note.noteId));
    assert.deepEqual(mention.by, { id: 'ann', name: 'Ann' });
    await h.quiesce();
    assert.equal(ann.events.some(is('mention')), false, 'Ann is not told of her own note');
    assert.deepEqual(h.service.store.deliveries.countByState(), deliveries, 'no outbox row');
    const entry = (await omar.ok('getTranscript', { conversationId: id })).entries.find((e) => e.kind === 'note')!;
    assert.equal(entry.content, '@omar can you check the refund? @nobody');
    assert.deepEqual(entry.mentions, [{ id: 'omar', name: 'Omar' }]);
    assert.deepEqual(entry.operator, { id: 'ann', name: 'Ann' });
    const audit = await omar.call('listAudit', {});
    assert.equal(audit.status, 403, 'the audit is an admin\'s');
    const rows = h.service.store.audit.search({ conversationId: id, action: 'note', limit: 5 });
    assert.equal(rows[0]?.operator.id, 'ann');
    assert.equal(rows[0]?.address, '127.0.0.1');
  });

  it("unread counts are each agent's own", async () => {
    const id = await idOf(ann, 'v1');
    assert.equal((await row(ann, id)).unread, 2);
    assert.equal((await row(omar, id)).unread, 2);
    const last = Math.max(...(await ann.ok('getTranscript', { conversationId: id })).entries.filter((e) => e.kind === 'message').map((e) => e.id));
    assert.deepEqual(await ann.ok('markRead', { conversationId: id, upToId: last }), { unread: 0 });
    assert.equal((await row(ann, id)).unread, 0);
    assert.equal((await row(omar, id)).unread, 2, "Ann's reading is not Omar's");
  });

  it('a reply by an agent takes a conversation nobody has; assigning by hand tells the new assignee, and is audited', async () => {
    await ann.ok('heartbeat', { away: true });
    await omar.ok('heartbeat', { away: true });
    assert.equal((await visit('v2', 'Anyone around?')).status, 200);
    await h.quiesce();
    const id = await idOf(omar, 'v2');
    assert.equal((await row(omar, id)).assignee, null, 'both away: it waits in the queue');
    assert.ok(await omar.next(is('alert', (e) => e.conversationId === id)), 'agents with nothing open hear of the queue');
    assert.deepEqual((await omar.ok('listConversations', { assignment: 'unassigned', view: 'needs_you' })).items.map((c) => c.id), [id]);
    await omar.ok('sendReply', { conversationId: id, content: 'Omar here' });
    assert.equal((await row(ann, id)).assignee, 'omar');
    const moved = await omar.ok('assignConversation', { conversationId: id, agentId: 'ann' });
    assert.deepEqual(moved, { assignee: 'ann', previous: 'omar' });
    const told = await ann.next(is('assigned', (e) => e.conversationId === id));
    assert.deepEqual(told.by, { id: 'omar', name: 'Omar' });
    const rows = h.service.store.audit.search({ conversationId: id, action: 'assign', limit: 5 }).map((a) => [a.operator.id, JSON.parse(a.detail!) as unknown]);
    assert.deepEqual(rows, [['omar', { from: 'omar', to: 'ann' }], ['omar', { from: null, to: 'omar', by: 'reply' }]]);
    const wrong = await omar.call('assignConversation', { conversationId: id, agentId: 'nobody' });
    assert.equal(wrong.status, 400);
  });
  it('a made-up draft base and a NUL in a note are refused as input (400, nothing written); the endpoint\'s requests reach admins only; the owner\'s open stream follows a change of id', async () => {
    const id = await idOf(ann, 'v1');
    const far = await ann.call('addNote', { conversationId: id, content: 'from the future', base: { messageId: 999_999, replyId: 999_999 } });
    assert.equal(far.status, 400);
    assert.match(!far.body.ok ? far.body.error.message : '', /newer than this conversation's newest entries/);
    const nul = await ann.call('addNote', { conversationId: id, content: '\u0000hello' });
    assert.equal(nul.status, 400, 'a 500 before: SQLite\'s length() stops at NUL');
    const ownerToken = consoleTokenAtStart(h.service.store.settings, secretKeyPath(h.dataDir)).token;
    // The service re-reads the token's hash once a second of its clock, which this test moves by hand.
    h.clock.advance(1000);
    const owner = await teamConsole(base, ownerToken);
    try {
      assert.equal((await visit('v-req', 'hello there')).status, 200);
      await owner.next(is('request'));
      assert.equal(ann.events.some(is('request')), false, 'the request log is an admin\'s view');
      await owner.ok('setOperator', { id: 'chief', name: 'Chief' });
      await omar.ok('addNote', { conversationId: id, content: 'for @chief' });
      await owner.next(is('mention', (e) => e.text.includes('for @chief')));
      await owner.ok('setOperator', { id: 'boss', name: 'Boss' });
    } finally {
      await owner.close();
    }
  });

  it('disabling an agent hands what they held that still needs a human to a colleague at once, not after the offline wait', async () => {
    // Both at their desks again (an earlier test left them away).
    await ann.ok('heartbeat', { away: false });
    await omar.ok('heartbeat', { away: false });
    assert.equal((await visit('v-dis', 'I need a person, please')).status, 200);
    await h.quiesce();
    const id = await idOf(omar, 'v-dis');
    const holder = (await row(omar, id)).assignee!;
    const other = holder === 'ann' ? omar : ann;
    const owner = await teamConsole(base, consoleTokenAtStart(h.service.store.settings, secretKeyPath(h.dataDir)).token);
    try {
      await owner.ok('setAgentDisabled', { id: holder, disabled: true });
      await h.quiesce();
      assert.equal((await row(other, id)).assignee, holder === 'ann' ? 'omar' : 'ann', 'on to the colleague online, with no clock moved');
      const rows = h.admin.audit.search({ action: 'assign', conversationId: id, limit: 5 });
      assert.ok(rows.some((r) => r.detail?.includes('agent disabled, back to the queue')), JSON.stringify(rows.map((r) => r.detail)));
    } finally {
      await owner.ok('setAgentDisabled', { id: holder, disabled: false });
      await owner.close();
    }
  });
});

describe('one person on one desktop: no assignment, alerts to every console, no collision check without a base', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ clockStart: Date.now() });
    h.addClient('acme', { sendUrl: 'http://127.0.0.1:9/hook' });
  });
  after(async () => h?.stop());

  it('a reply by the owner assigns nothing, and the team is the owner alone', async () => {
    const owner = h.service.console.asOwner;
    await owner.setOperator({ id: 'me', name: 'Me' });
    assert.equal((await h.post({ event_type: 'website_dialog', msg_id: mid('solo'), from_user_id: 'v', content: 'help' })).status, 200);
    await h.quiesce();
    const [c] = (await owner.listConversations({ view: 'all', limit: 10 })).items;
    await owner.sendReply({ conversationId: c!.id, content: 'Hello' });
    assert.equal((await owner.getConversations({ ids: [c!.id] }))[0]!.assignee, null);
    const team = await owner.listTeam({});
    assert.equal(team.teamMode, false);
    assert.deepEqual(team.members.map((m) => m.id), ['me']);
  });
});
