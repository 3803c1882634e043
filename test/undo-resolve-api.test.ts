import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Harness } from './helpers/harness.ts';
import type { ConsoleClient } from './helpers/console.ts';
import { eventually } from './helpers/receiver.ts';
import { ANN, startNeedsYou } from './helpers/needs-you.ts';
import { UNDO_RESOLVE_MS } from '../src/main/conversations/resolve-commands.ts';

/** undoResolve over the console listener, as the browser console calls it: zod-checked input, refusals as data. */
describe('Undo of a Resolve over the console API', () => {
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

  it('needs the operator, and names the Resolve it takes back', async () => {
    const id = await handoff('early');
    const r = await c.call('undoResolve', { conversationId: id, resolvedAt: 1 });
    assert.equal(!r.ok && r.error.code, 'operator_required');
    await c.ok('setOperator', ANN);
    const bad = await c.call('undoResolve', { conversationId: id });
    assert.equal(!bad.ok && bad.error.code, 'invalid_input');
    assert.match(!bad.ok ? bad.error.message : '', /^resolvedAt: /);
    const none = await c.call('undoResolve', { conversationId: 'no-such-conversation', resolvedAt: 1 });
    assert.equal(!none.ok && none.error.code, 'not_found');
    await c.ok('resolveConversation', { conversationId: id });
  });

  it('puts the conversation back at its place in Needs you; too late, it is refused with a reason and changes nothing', async () => {
    await handoff('first');
    const second = await handoff('second');
    await handoff('third');
    const waitedSince = (await c.ok('getConversations', { ids: [second] }))[0]!.needsHumanSince;
    const resolved = await c.ok('resolveConversation', { conversationId: second });
    assert.equal(resolved.undoable, true);
    assert.deepEqual(await queue(), ['first', 'third']);
    h.clock.advance(3_000);
    const events = c.events.length;
    assert.deepEqual(await c.ok('undoResolve', { conversationId: second, resolvedAt: resolved.resolvedAt }), { needsHumanSince: waitedSince, resolvedAt: null, resolvedBy: null });
    assert.deepEqual(await queue(), ['first', 'second', 'third']);
    const after = await c.ok('getTranscript', { conversationId: second });
    assert.deepEqual(after.conversation.lastCommand, { command: 'undo_resolve', source: 'console', operator: 'Ann Lee' });
    // An open console hears of it and reloads the conversation and the queue.
    await eventually(() => c.events.slice(events).some((e) => e.type === 'conversation' && e.conversationId === second), 'the conversation event');

    const again = await c.ok('resolveConversation', { conversationId: second });
    h.clock.advance(UNDO_RESOLVE_MS + 1);
    const late = await c.call('undoResolve', { conversationId: second, resolvedAt: again.resolvedAt });
    assert.equal(late.ok, false);
    assert.equal(!late.ok && late.error.code, 'undo_expired');
    assert.match(!late.ok ? late.error.message : '', /^Too late to undo/);
    assert.deepEqual(await queue(), ['first', 'third']);
  });
});
