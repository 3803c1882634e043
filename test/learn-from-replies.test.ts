import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { cliAsync, spawnServe, type ServeProcess } from './helpers/processes.ts';
import { readEventStream } from './helpers/event-stream.ts';
import { consoleCall, sendAs } from './helpers/console-session.ts';
import type { ApiResult, AuditItem, ConsoleEvent, ConsoleOutputs } from '../src/shared/console-api.ts';

type Out<M extends keyof ConsoleOutputs> = ConsoleOutputs[M];

/** Learning from the team against a real `serve` over HTTP: an agent's answer becomes a masked proposal, an admin's approval an answer. */
describe('operators\' answers become reviewed knowledge (serve, over HTTP)', () => {
  let server: ServeProcess;
  let base: string;
  let secret: string;
  let ann: string;
  const events: ConsoleEvent[] = [];
  let seen: () => void = () => {};
  let stream: AbortController;

  /** As the console calls it: status and body, errors as data. */
  const call = async <M extends keyof ConsoleOutputs>(token: string, method: M, input: unknown): Promise<{ status: number; body: ApiResult<Out<M>> }> => {
    const res = await fetch(`${base}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(input) });
    return { status: res.status, body: (await res.json()) as ApiResult<Out<M>> };
  };
  const ok = async <M extends keyof ConsoleOutputs>(token: string, method: M, input: unknown = {}): Promise<Out<M>> => {
    const r = await call(token, method, input);
    if (!r.body.ok) throw new Error(`${method}: ${r.body.error.code} ${r.body.error.message}`);
    return r.body.value;
  };
  const ask = async (visitor: string, content: string, nickname?: string): Promise<{ conversation_id: string; msg_id: string; reply: { content: string; handoff: boolean } }> => {
    const msgId = `m-${randomUUID()}`;
    const res = await sendAs(server, 'acme', secret, { event_type: 'website_dialog', msg_id: msgId, from_user_id: visitor, ...(nickname ? { nickname } : {}), content });
    assert.equal(res.status, 200);
    return { ...((await res.json()) as { conversation_id: string; reply: { content: string; handoff: boolean } }), msg_id: msgId };
  };
  /** Waits (on the event stream, no sleep) until the service says `pending` proposals wait. */
  const proposalsAt = (pending: number, from = 0): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => void (events.slice(from).some((e) => e.type === 'proposals' && e.pending === pending) && resolve());
      seen = check;
      check();
    });

  before(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-learn-'));
    server = await spawnServe(dataDir);
    base = server.consoleBase.replace(/\/$/, '');
    const owner = server.consoleToken;
    await consoleCall(server, 'setOperator', { id: 'boss', name: 'Boss' });
    secret = (await consoleCall<{ secret: string }>(server, 'addClient', { id: 'acme', settings: { sendUrl: 'http://127.0.0.1:9/hook' } })).secret;
    await consoleCall(server, 'saveKb', { question: 'Where is my order?', answer: 'Open Orders in your account to see where your parcel is and when it arrives.' });
    const added = await cliAsync(dataDir, 'agents', 'add', 'ann', '--name', 'Ann Lee', '--origin', base);
    assert.equal(added.status, 0, added.stderr);
    const link = /^sign-in link: (\S+)$/m.exec(added.stdout)![1]!;
    const chosen = await fetch(`${base}/api/auth/usePasswordLink`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ link: link.split('#sign-in-link=')[1], password: 'a long enough passphrase' }) });
    ann = ((await chosen.json()) as { value: { token: string } }).value.token;
    stream = new AbortController();
    const res = await fetch(`${base}/api/events`, { headers: { authorization: `Bearer ${owner}` }, signal: stream.signal });
    void readEventStream(res, events, () => seen());
  });
  after(async () => {
    stream?.abort();
    server?.child.kill('SIGTERM');
    await server?.exit();
  });

  let firstId = 0;

  it('a handed-off question answered by an agent becomes a proposal, masked, with its provenance', async () => {
    const asked = await ask('v1', 'Hi, my name is Carol Jones. How do I close my account? Mail me at carol.j@example.com or call +44 20 7946 0958', 'Carol Jones');
    assert.equal(asked.reply.handoff, true, 'the knowledge base does not cover it');
    const sent = await ok(ann, 'sendReply', { conversationId: asked.conversation_id, content: 'Hello Carol! Open Settings, then Privacy, then Close account. We confirm to carol.j@example.com within 24 hours.' });
    await proposalsAt(1);
    const { groups, pending } = await ok(ann, 'listProposals', {});
    assert.equal(pending, 1);
    const [p] = groups[0]!.proposals;
    firstId = p!.id;
    assert.equal(p!.question, 'Hi, my name is [name]. How do I close my account? Mail me at [email] or call [phone]');
    assert.equal(p!.answer, 'Hello [name]! Open Settings, then Privacy, then Close account. We confirm to [email] within 24 hours.');
    assert.deepEqual([p!.kind, p!.source, p!.conversationId, p!.messageIds, p!.operator], ['entry', 'handoff', asked.conversation_id, [asked.msg_id, sent.msgId], { id: 'ann', name: 'Ann Lee' }]);
    assert.equal(groups[0]!.count, 1);
    assert.equal(groups[0]!.thisWeek, 1);
  });

  it('an agent edits their own proposal but cannot approve it: forbidden, as data', async () => {
    await ok(ann, 'saveProposal', { id: firstId, question: 'How do I close my account?', answer: 'Open Settings, then Privacy, then Close account. We confirm by email within 24 hours.' });
    const refused = await call(ann, 'approveProposals', { ids: [firstId], question: 'x', answer: 'y' });
    assert.equal(refused.status, 403);
    assert.ok(!refused.body.ok && refused.body.error.code === 'forbidden', JSON.stringify(refused.body));
    assert.equal((await ok(ann, 'countProposals')).pending, 1, 'still waiting');
  });

  it('approved by the admin, the same question gets the bot\'s answer at once', async () => {
    const before = await ask('v2', 'How do I close my account?');
    assert.equal(before.reply.handoff, true);
    const [p] = (await ok(server.consoleToken, 'listProposals', {})).groups[0]!.proposals;
    const approved = await ok(server.consoleToken, 'approveProposals', { ids: [p!.id], question: p!.question, answer: p!.answer });
    assert.equal(approved.decided, 1);
    await proposalsAt(0);
    const after = await ask('v3', 'How do I close my account?');
    assert.equal(after.reply.handoff, false);
    assert.equal(after.reply.content, 'Open Settings, then Privacy, then Close account. We confirm by email within 24 hours.');
  });

  it('an answer that is an entry\'s answer proposes a phrasing for that entry; rejected, the reason is kept', async () => {
    const asked = await ask('v4', 'I want to get rid of my profile');
    assert.equal(asked.reply.handoff, true);
    await ok(ann, 'sendReply', { conversationId: asked.conversation_id, content: 'Hi! Open Settings, then Privacy, then Close account. We confirm by email within 24 hours.' });
    await proposalsAt(1);
    const [group] = (await ok(server.consoleToken, 'listProposals', {})).groups;
    const p = group!.proposals[0]!;
    assert.deepEqual([p.kind, p.question, group!.entry?.question], ['phrasing', 'I want to get rid of my profile', 'How do I close my account?']);
    const rejected = await ok(server.consoleToken, 'rejectProposals', { ids: [p.id], reason: 'too vague to teach' });
    assert.equal(rejected.decided, 1);
    const again = await call(server.consoleToken, 'rejectProposals', { ids: [p.id], reason: 'twice' });
    assert.equal(again.status, 409, 'a decided proposal is not decided again');
    const list = await ok(ann, 'listProposals', { filter: 'rejected' });
    const kept = list.groups.flatMap((g) => g.proposals).find((x) => x.id === p.id)!;
    assert.deepEqual([kept.state, kept.reason, kept.decidedBy], ['rejected', 'too vague to teach', { id: 'boss', name: 'Boss' }]);
  });

  it('every step is in the audit under learn, naming who', async () => {
    const rows = await ok<'listAudit'>(server.consoleToken, 'listAudit', { action: 'learn' });
    const what = rows.map((r: AuditItem) => [r.operator.id, Object.keys(JSON.parse(r.detail ?? '{}') as object)[0]]).reverse();
    assert.deepEqual(what, [
      ['ann', 'proposed'],
      ['ann', 'edited'],
      ['boss', 'approved'],
      ['ann', 'proposed'],
      ['boss', 'rejected'],
    ]);
  });

  it('an agent who corrects a bot answer before the customer writes again proposes it, as a correction', async () => {
    const asked = await ask('v5', 'How do I close my account?');
    assert.equal(asked.reply.handoff, false);
    const mark = events.length;
    await ok(ann, 'sendReply', { conversationId: asked.conversation_id, content: 'Sorry, one more step: download your data from Settings, then Export first; closing deletes it.' });
    await proposalsAt(1, mark);
    const p = (await ok(ann, 'listProposals', {})).groups[0]!.proposals[0]!;
    assert.deepEqual([p.source, p.kind, p.question], ['correction', 'entry', 'How do I close my account?']);
    // The admin merges the correction into the entry the bot answered from, taking its answer too.
    const entry = (await consoleCall<Array<{ id: number; question: string; answer: string }>>(server, 'listKb', {})).find((e) => e.question === 'How do I close my account?')!;
    const merged = await consoleCall<{ decided: number }>(server, 'mergeProposals', { ids: [p.id], entryId: entry.id, phrasings: [], answer: p.answer });
    assert.equal(merged.decided, 1);
    const after = (await consoleCall<Array<{ id: number; answer: string }>>(server, 'listKb', {})).find((e) => e.id === entry.id)!;
    assert.equal(after.answer, p.answer, 'the correction is the entry\'s answer now');
    assert.equal((await ask('v5b', 'How do I close my account?')).reply.content, p.answer, 'and the bot answers with it at once');
    const audit = await consoleCall<Array<{ action: string; detail: string | null }>>(server, 'listAudit', { action: 'learn' });
    assert.ok(audit.some((a) => /"answerReplaced":true/.test(a.detail ?? '')));
  });
  it('"Teach the bot" on a bot answer: a correction with its conversation and messages, masked, answered by an entry\'s answer as a phrasing', async () => {
    const asked = await ask('v6', 'How do I close my account?', 'Dave Smith');
    assert.equal(asked.reply.handoff, false, 'the bot answered it');
    const { entries } = await ok(ann, 'getTranscript', { conversationId: asked.conversation_id });
    const bot = entries.find((e) => e.kind === 'reply' && e.role === 'ai')!;
    assert.deepEqual(bot.replyTo, [asked.msg_id], 'a bot reply names the question it answered');
    const before = (await ok(ann, 'countProposals')).pending;
    const taught = await ok(ann, 'saveProposal', {
      question: 'How do I close my account?',
      answer: 'Dave, first export your data from Settings, then Export: closing deletes it. We confirm to dave.s@example.com.',
      from: { conversationId: asked.conversation_id, messageIds: [asked.msg_id, bot.msgId] },
    });
    assert.deepEqual(
      [taught.kind, taught.source, taught.state, taught.conversationId, taught.messageIds, taught.operator, taught.question, taught.answer],
      ['entry', 'correction', 'pending', asked.conversation_id, [asked.msg_id, bot.msgId], { id: 'ann', name: 'Ann Lee' }, 'How do I close my account?', '[name], first export your data from Settings, then Export: closing deletes it. We confirm to [email].'],
    );
    assert.equal((await ok(ann, 'countProposals')).pending, before + 1);
    const again = await ok(ann, 'saveProposal', { question: taught.question, answer: taught.answer, from: { conversationId: asked.conversation_id, messageIds: [asked.msg_id, bot.msgId] } });
    assert.equal(again.id, taught.id, 'the same lesson twice is one proposal');
    // "Teach the bot the answer" on a handed-off question, with an answer the knowledge base already gives: a new way to ask that entry.
    const order = await ask('v7', 'Has the thing I bought been sent out yet?');
    assert.equal(order.reply.handoff, true, 'asked in words the entry does not have yet');
    const phrasing = await ok(ann, 'saveProposal', { question: 'Has the thing I bought been sent out yet?', answer: 'Open Orders in your account to see where your parcel is and when it arrives.', from: { conversationId: order.conversation_id, messageIds: [order.msg_id] } });
    const kb = await ok(server.consoleToken, 'listKb', {});
    assert.deepEqual([phrasing.kind, phrasing.entryId, phrasing.source], ['phrasing', kb.find((e) => e.question === 'Where is my order?')!.id, 'handoff']);
    const rows = await ok<'listAudit'>(server.consoleToken, 'listAudit', { action: 'learn' });
    const row = rows.find((r) => (JSON.parse(r.detail ?? '{}') as { proposed?: number }).proposed === taught.id)!;
    assert.deepEqual([row.operator.id, row.conversationId, (JSON.parse(row.detail!) as { messages: string[] }).messages], ['ann', asked.conversation_id, [asked.msg_id, bot.msgId]]);
  });

  it('a lesson naming messages of another conversation is refused, as data, and proposes nothing', async () => {
    const mine = await ask('v8', 'Do you sell gift cards?');
    const theirs = await ask('v9', 'Can I pay later?');
    const before = (await ok(ann, 'countProposals')).pending;
    const refused = await call(ann, 'saveProposal', { question: 'Can I pay later?', answer: 'Not yet.', from: { conversationId: mine.conversation_id, messageIds: [mine.msg_id, theirs.msg_id] } });
    assert.equal(refused.status, 400);
    assert.ok(!refused.body.ok && refused.body.error.code === 'invalid_input' && refused.body.error.message.includes(theirs.msg_id), JSON.stringify(refused.body));
    const gone = await call(ann, 'saveProposal', { question: 'x', answer: 'y', from: { conversationId: 'no-such-conversation', messageIds: [mine.msg_id] } });
    assert.equal(gone.status, 404);
    assert.equal((await ok(ann, 'countProposals')).pending, before, 'nothing proposed');
  });
});
