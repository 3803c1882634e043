import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { openDatabase } from './db.ts';
import { createStore, type Store } from './index.ts';
import type { ClaimJob } from './team-claim.fixture.ts';
import { clientSettingsSchema } from '../../shared/client-settings.ts';

const DAY = 86_400_000;

/** A conversation with `customer` messages from the customer, flagged needs_human when asked. */
function conversation(store: Store, id: string, o: { needsHuman?: boolean; at?: number; customer?: number } = {}): void {
  const at = o.at ?? 1000;
  store.conversations.create({ id, clientId: 'acme', channel: 'web', peer: `p-${id}`, groupId: null, customerId: `cust-${id}`, autoReply: 'active', now: at });
  for (let i = 0; i < (o.customer ?? 0); i++) message(store, id, 'customer', `hello ${i}`, at + i);
  if (o.needsHuman) store.conversations.flagNeedsHuman(id, at, 'handoff');
}

let seq = 0;
function message(store: Store, conversationId: string, role: 'customer' | 'staff', content: string, at: number): number {
  return store.messages.insert({
    conversationId,
    clientId: 'acme',
    eventType: 'website_dialog',
    msgId: `m-${++seq}`,
    role,
    fromUserId: role === 'customer' ? 'cust' : 'staffer',
    fromUserType: null,
    content,
    messageInfo: '{}',
    createTimestamp: null,
    receivedAt: at,
    replyScheduled: null,
    replyReason: null,
  });
}

function operatorReply(store: Store, conversationId: string, by: { id: string; name: string }, content: string, at: number): number {
  return store.messages.insertReply({
    conversationId,
    kind: 'operator',
    msgId: `r-${++seq}`,
    replyTo: [],
    afterMessageId: store.workspace.latestMessageId(conversationId),
    content,
    handoff: false,
    engine: 'operator',
    confidence: null,
    sources: [],
    operator: by,
    createdAt: at,
  });
}

describe('team store: assignment, collisions and per-account read markers', () => {
  let dir: string;
  let path: string;
  let store: Store;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sb-team-store-'));
    path = join(dir, 'switchboard.db');
    store = createStore(openDatabase(path));
    store.clients.create('acme', clientSettingsSchema.parse({}), 0);
    store.accounts.setOwner({ id: 'owner', name: 'Owner', now: 0 });
    store.accounts.add({ id: 'ann', name: 'Ann', role: 'agent', now: 2 * DAY });
    store.accounts.add({ id: 'omar', name: 'Omar', role: 'agent', now: 2 * DAY });
  });
  after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a claim takes only a conversation that needs a human, that nobody has, for an agent under capacity', () => {
    conversation(store, 'c-claim-1', { needsHuman: true });
    conversation(store, 'c-claim-2', { needsHuman: true });
    conversation(store, 'c-claim-calm');
    assert.equal(store.team.claim('c-claim-calm', 'ann', 5, 10), false, 'not needing a human');
    assert.equal(store.team.claim('c-claim-1', 'ann', 1, 10), true);
    assert.equal(store.team.claim('c-claim-1', 'omar', 5, 11), false, 'someone has it');
    assert.equal(store.team.claim('c-claim-2', 'ann', 1, 12), false, 'Ann is at her capacity of 1');
    assert.equal(store.team.assigneeOf('c-claim-1'), 'ann');
    assert.deepEqual(store.team.openCounts().get('ann'), 1);
    // A reply takes only what nobody has; by hand anything goes.
    assert.equal(store.team.takeIfFree('c-claim-1', 'omar', 13), false);
    assert.equal(store.team.takeIfFree('c-claim-calm', 'omar', 13), true);
    assert.equal(store.team.assign('c-claim-1', null, 14), true);
    assert.equal(store.team.assigneeOf('c-claim-1'), null);
    assert.deepEqual(store.team.waitingUnassigned(10).filter((id) => id.startsWith('c-claim')), ['c-claim-1', 'c-claim-2']);
  });

  it('an offline agent gets back only their conversations that still need a human', () => {
    conversation(store, 'c-ret-1', { needsHuman: true });
    conversation(store, 'c-ret-2');
    store.team.assign('c-ret-1', 'omar', 20);
    store.team.assign('c-ret-2', 'omar', 20);
    assert.deepEqual(store.team.returnToQueue('omar'), ['c-ret-1']);
    assert.equal(store.team.assigneeOf('c-ret-1'), null);
    assert.equal(store.team.assigneeOf('c-ret-2'), 'omar', 'an answered one stays theirs');
  });

  it('what arrived after a draft\'s base: customer and staff messages and other operators\' replies, not the author\'s own', () => {
    conversation(store, 'c-base', { customer: 1 });
    const base = { messageId: store.workspace.latestMessageId('c-base'), replyId: store.team.latestReplyId('c-base') };
    assert.deepEqual(store.team.arrivedSince('c-base', base, 'ann'), []);
    operatorReply(store, 'c-base', { id: 'ann', name: 'Ann' }, 'mine', 100);
    assert.deepEqual(store.team.arrivedSince('c-base', base, 'ann'), [], 'her own reply is not news to her');
    const omar = operatorReply(store, 'c-base', { id: 'omar', name: 'Omar' }, 'On it', 101);
    const customer = message(store, 'c-base', 'customer', 'Are you there?', 102);
    assert.deepEqual(store.team.arrivedSince('c-base', base, 'ann'), [
      { id: omar, kind: 'reply', role: 'staff', by: 'Omar', text: 'On it', at: 101 },
      { id: customer, kind: 'message', role: 'customer', by: 'cust', text: 'Are you there?', at: 102 },
    ]);
    const now = { messageId: customer, replyId: store.team.latestReplyId('c-base') };
    assert.deepEqual(store.team.arrivedSince('c-base', now, 'ann'), [], 'a base that saw them');
  });

  it('unread is per account: the owner counts from the start, an agent from when their account was made', () => {
    const ownerReader = { id: 'owner', floor: 0 };
    const annReader = { id: 'ann', floor: store.accounts.get('ann')!.createdAt };
    conversation(store, 'c-read', { customer: 3, at: DAY });
    message(store, 'c-read', 'customer', 'after Ann joined', 3 * DAY);
    assert.equal(store.team.unread(ownerReader, 'c-read'), 4);
    assert.equal(store.team.unread(annReader, 'c-read'), 1, 'history before her account is not hers to read');
    const last = store.workspace.latestMessageId('c-read');
    assert.equal(store.team.markRead(annReader, 'c-read', last), 0);
    assert.equal(store.team.unread(ownerReader, 'c-read'), 4, 'Ann reading is not the owner reading');
    assert.equal(store.team.markRead(annReader, 'c-read', 1), 0, 'a marker never moves back');
    assert.equal(store.console.conversation('c-read', ownerReader)!.unread, 4);
    assert.equal(store.console.conversation('c-read', annReader)!.unread, 0);
  });
});

describe('auto-assignment claims from two connections at once', () => {
  const N = 60;
  let dir: string;
  let path: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sb-team-race-'));
    path = join(dir, 'switchboard.db');
    const store = createStore(openDatabase(path));
    store.clients.create('acme', clientSettingsSchema.parse({}), 0);
    store.accounts.add({ id: 'ann', name: 'Ann', role: 'agent', now: 0 });
    store.accounts.add({ id: 'omar', name: 'Omar', role: 'agent', now: 0 });
    store.transaction(() => {
      for (let i = 0; i < N; i++) conversation(store, `race-${i}`, { needsHuman: true, at: i });
    });
    store.close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function race(jobs: Array<Omit<ClaimJob, 'gate' | 'path'>>): Promise<string[][]> {
    const gate = new SharedArrayBuffer(8);
    const workers = jobs.map((j) => new Worker(new URL('./team-claim.fixture.ts', import.meta.url), { workerData: { ...j, path, gate } satisfies ClaimJob }));
    const ready = workers.map((w) => new Promise<void>((resolve, reject) => { w.once('message', () => resolve()); w.once('error', reject); }));
    // Both threads open their connection, say so, and wait on the gate: released together, they claim each conversation at once.
    await Promise.all(ready);
    const results = workers.map((w) => new Promise<string[]>((resolve, reject) => { w.once('message', resolve); w.once('error', reject); }));
    Atomics.store(new Int32Array(gate), 0, 1);
    Atomics.notify(new Int32Array(gate), 0);
    const won = await Promise.all(results);
    await Promise.all(workers.map((w) => w.terminate()));
    return won;
  }

  it('the choice is made on reads, the claim re-checks: two nodes that both saw the same queue never both win', () => {
    const a = createStore(openDatabase(path));
    const b = createStore(openDatabase(path, { busyTimeoutMs: 5000 }));
    const seenByA = a.team.waitingUnassigned(1);
    const seenByB = b.team.waitingUnassigned(1);
    assert.deepEqual(seenByA, seenByB, 'both read the same longest wait');
    assert.equal(a.team.claim(seenByA[0]!, 'ann', 100, 1), true);
    assert.equal(b.team.claim(seenByB[0]!, 'omar', 100, 1), false, 'the second claim finds it taken');
    assert.equal(b.team.assigneeOf(seenByA[0]!), 'ann');
    a.team.assign(seenByA[0]!, null, 2);
    a.close();
    b.close();
  });

  it('two writers racing over the same queue: every conversation gets exactly one assignee', async (t) => {
    const ids = Array.from({ length: N / 2 }, (_, i) => `race-${i}`);
    const [ann, omar] = await race([
      { agentId: 'ann', capacity: 1000, ids },
      { agentId: 'omar', capacity: 1000, ids },
    ]);
    t.diagnostic(`claims won: Ann ${ann!.length}, Omar ${omar!.length}`);
    // Who wins each claim is up to the scheduler (on a loaded machine one thread may win them all):
    // the rule is that no conversation is won twice, which holds whichever way they fall.
    assert.equal(ann!.length + omar!.length, ids.length, 'no conversation was claimed twice, none was lost');
    assert.equal(new Set([...ann!, ...omar!]).size, ids.length);
    const store = createStore(openDatabase(path));
    for (const id of ids) assert.equal(store.team.assigneeOf(id), ann!.includes(id) ? 'ann' : 'omar', id);
    store.close();
  });

  it('two writers claiming for the same agent never give her more than her capacity', async () => {
    const store = createStore(openDatabase(path));
    const before = store.team.openCounts().get('omar') ?? 0;
    const ids = Array.from({ length: N / 2 }, (_, i) => `race-${N / 2 + i}`);
    const capacity = before + 7;
    const [a, b] = await race([
      { agentId: 'omar', capacity, ids },
      { agentId: 'omar', capacity, ids },
    ]);
    assert.equal(a!.length + b!.length, 7, 'seven claims won between the two');
    assert.equal(store.team.openCounts().get('omar'), capacity, `capacity ${capacity}: he holds exactly that many`);
    store.close();
  });
});
