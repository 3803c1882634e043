import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Harness } from './helpers/harness.ts';
import type { ConsoleClient } from './helpers/console.ts';
import { eventually } from './helpers/receiver.ts';
import { ANN, startNeedsYou } from './helpers/needs-you.ts';

/** flagConversation over the console listener, as the browser console calls it: zod-checked input, errors as data. */
describe('"Needs a human" by hand over the console API', () => {
  let h: Harness;
  let c: ConsoleClient;
  let session: Awaited<ReturnType<typeof startNeedsYou>>;

  before(async () => {
    session = await startNeedsYou();
    ({ h, c } = session);
  });
  after(() => session.stop());

  const handoff = (visitor: string): Promise<string> => session.handoff(visitor);
  const queue = (): Promise<Array<string | null>> => session.queue();

  it('needs the operator and checks its input', async () => {
    const id = await handoff('early');
    const r = await c.call('flagConversation', { conversationId: id });
    assert.equal(!r.ok && r.error.code, 'operator_required');
    await c.ok('setOperator', ANN);
    const long = await c.call('flagConversation', { conversationId: id, note: 'x'.repeat(501) });
    assert.equal(!long.ok && long.error.code, 'invalid_input');
    assert.match(!long.ok ? long.error.message : '', /^note: /);
    const none = await c.call('flagConversation', { conversationId: 'no-such-conversation' });
    assert.equal(!none.ok && none.error.code, 'not_found');
    await c.ok('resolveConversation', { conversationId: id });
  });

  it('puts a resolved conversation at the end of Needs you with a line naming the agent and the note; again, it is a no-op that says so', async () => {
    const first = await handoff('first');
    await handoff('second');
    await c.ok('resolveConversation', { conversationId: first });
    assert.deepEqual(await queue(), ['second']);
    const events = c.events.length;
    const at = h.clock.now();
    assert.deepEqual(await c.ok('flagConversation', { conversationId: first, note: '  over to Chen  ' }), { needsHumanSince: at, alreadyFlagged: false });
    assert.deepEqual(await queue(), ['second', 'first']);
    assert.deepEqual((await c.ok('listConversations', { view: 'needs_you' })).items.map((i) => i.needsHumanReason), ['handoff', 'flagged'], 'each row says why it is there');
    const t = await c.ok('getTranscript', { conversationId: first });
    assert.deepEqual(t.conversation.lastCommand, { command: 'flag_human', source: 'console', operator: 'Ann Lee', note: 'over to Chen' }, 'the list previews the note');
    assert.equal(t.entries.at(-1)!.messageInfo?.['note'], 'over to Chen', 'the note is stored trimmed');
    await eventually(() => c.events.slice(events).some((e) => e.type === 'conversation' && e.conversationId === first), 'the conversation event');
    assert.ok(!c.events.slice(events).some((e) => e.type === 'alert'), 'no alert for the agent\'s own action');
    const audit = await c.ok('listAudit', { conversationId: first });
    assert.deepEqual([audit[0]!.action, audit[0]!.operator?.name], ['flag', 'Ann Lee']);

    h.clock.advance(5_000);
    const lines = t.entries.length;
    assert.deepEqual(await c.ok('flagConversation', { conversationId: first }), { needsHumanSince: at, alreadyFlagged: true });
    assert.equal((await c.ok('getTranscript', { conversationId: first })).entries.length, lines, 'no second line');
    assert.deepEqual(await queue(), ['second', 'first']);
  });
});
