import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { startReceiver, eventually, type Receiver } from './helpers/receiver.ts';
import { scriptedEngine } from './helpers/engines.ts';
import { createConsoleServer } from '../src/main/console-api/console-server.ts';
import { consoleTokenAtStart } from '../src/main/console-api/console-token.ts';
import { secretKeyPath } from '../src/main/store/data-dir.ts';
import type { ApiResult, ConsoleEvent } from '../src/shared/console-api.ts';

describe('console API over HTTP (the browser bridge)', () => {
  let h: Harness;
  let rx: Receiver;
  let server: Server;
  let base: string;
  let token: string;
  const call = async <T>(method: string, input: unknown = {}): Promise<{ status: number; result: ApiResult<T> }> => {
    const r = await fetch(`${base}/api/${method}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(input) });
    return { status: r.status, result: (await r.json()) as ApiResult<T> };
  };

  before(async () => {
    rx = await startReceiver();
    h = await startHarness({ engine: scriptedEngine().engine });
    h.addClient('acme', { sendUrl: rx.url });
    token = consoleTokenAtStart(h.service.store.settings, secretKeyPath(h.dataDir)).token;
    server = createConsoleServer({
      rendererDir: '/nonexistent',
      accounts: h.service.console.accounts,
      handlers: h.service.console.handlers,
      events: h.service.console.events,
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await call('setOperator', { id: 'ann', name: 'Ann' });
  });
  after(async () => {
    server.closeAllConnections();
    server.close();
    await h.stop();
    await rx.close();
  });

  it('lists conversations, newest first, filterable and searchable', async () => {
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'alice', from_user_type: 2, content: 'my parcel is late' });
    h.clock.advance(1000);
    await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'bob', content: 'opening hours?' });
    const all = await call<{ items: Array<{ peer: string; channel: string; lastText: string }> }>('listConversations');
    assert.ok(all.result.ok);
    assert.deepEqual(all.result.value.items.map((c) => c.peer).slice(0, 2), ['u:bob', 'u:alice']);
    const web = await call<{ items: Array<{ peer: string }> }>('listConversations', { channel: 'web' });
    assert.deepEqual(web.result.ok && web.result.value.items.map((c) => c.peer), ['u:bob']);
    const found = await call<{ items: Array<{ peer: string }> }>('listConversations', { search: 'PARCEL' });
    assert.deepEqual(found.result.ok && found.result.value.items.map((c) => c.peer), ['u:alice']);
  });

  it('a transcript shows each customer message with why it was or was not answered, and the reply with its delivery', async () => {
    const m = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'carol', from_user_type: 2, content: 'hello there' });
    h.clock.advance(2000);
    await eventually(() => rx.received.length >= 1, 'delivery');
    const id = String(m.body['conversation_id']);
    type Entry = { kind: string; decision?: { reason: string; outcome: string } | null; delivery?: { state: string } | null };
    const entries = await eventually(async () => {
      const r = await call<{ entries: Entry[] }>('getTranscript', { conversationId: id });
      return r.result.ok && r.result.value.entries.find((e) => e.kind === 'reply')?.delivery?.state === 'sent' ? r.result.value.entries : false;
    }, 'the sent reply in the transcript');
    assert.equal(entries[0]?.kind, 'message');
    assert.deepEqual({ reason: entries[0]?.decision?.reason, outcome: entries[0]?.decision?.outcome }, { reason: 'scheduled', outcome: 'answered' });
    assert.equal(entries[1]?.kind, 'reply');
  });

  it('stop and resume auto-reply: a stopped conversation is not answered until resumed', async () => {
    const m = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'dave', from_user_type: 2, content: 'first' });
    const conversationId = String(m.body['conversation_id']);
    const stop = await call<{ previous: string; cancelledReplies: number }>('stopAutoReply', { conversationId });
    assert.deepEqual(stop.result, { ok: true, value: { previous: 'active', cancelledReplies: 0 } });
    const during = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'dave', from_user_type: 2, content: 'second' });
    assert.equal((during.body['reply'] as { reason: string }).reason, 'auto_reply_stopped');
    const resume = await call<{ previous: string }>('resumeAutoReply', { conversationId });
    assert.deepEqual(resume.result, { ok: true, value: { previous: 'stopped', restoredReplies: 0 } });
    const after = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'dave', from_user_type: 2, content: 'third' });
    assert.equal((after.body['reply'] as { reason: string }).reason, 'scheduled');
  });

  it('Undo of a stop brings back the reply it cancelled while the reply was retrying; a plain resume does not', async () => {
    rx.respond = () => ({ status: 503 });
    const delivered = rx.received.length;
    const m = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'erin', from_user_type: 2, content: 'where is my parcel?' });
    const conversationId = String(m.body['conversation_id']);
    h.clock.advance(2000);
    await eventually(() => rx.received.length > delivered, 'the first attempt, refused with 503');
    const retrying = () => h.admin.deliveries.list(undefined, 50).find((d) => d.conversationId === conversationId)!;
    await eventually(() => retrying().state === 'pending' && retrying().attempts === 1, 'retrying');
    const stop = await call<{ cancelledReplies: number }>('stopAutoReply', { conversationId });
    assert.equal(stop.result.ok && stop.result.value.cancelledReplies, 1);
    assert.equal(retrying().state, 'cancelled');
    rx.respond = () => ({ status: 200 });
    const undo = await call<{ restoredReplies: number; undo: string }>('resumeAutoReply', { conversationId, undoStop: true });
    assert.equal(undo.result.ok && undo.result.value.restoredReplies, 1);
    assert.equal(undo.result.ok && undo.result.value.undo, 'undone');
    // A second click (or a retried request) finds the stop taken back already, and says so.
    const again = await call<{ restoredReplies: number; undo: string }>('resumeAutoReply', { conversationId, undoStop: true });
    assert.deepEqual(again.result, { ok: true, value: { previous: 'active', restoredReplies: 0, undo: 'already_undone' } });
    await eventually(() => retrying().state === 'sent', 'the restored reply delivered');
    assert.equal(rx.received.at(-1)!.body.message_info['conversation_id'], conversationId);
    // A stop undone too late, or a plain resume, leaves the cancelled reply cancelled.
    rx.respond = () => ({ status: 503 });
    const n = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'erin', from_user_type: 2, content: 'hello again?' });
    h.clock.advance(2000);
    const latest = () => h.admin.deliveries.list(undefined, 50).filter((d) => d.conversationId === conversationId).sort((a, b) => b.id - a.id)[0]!;
    await eventually(() => latest().attempts === 1 && latest().state === 'pending', 'the second reply retrying');
    await call('stopAutoReply', { conversationId });
    h.clock.advance(20_000);
    const late = await call<{ restoredReplies: number; undo: string }>('resumeAutoReply', { conversationId, undoStop: true });
    assert.equal(late.result.ok && late.result.value.restoredReplies, 0);
    assert.equal(late.result.ok && late.result.value.undo, 'expired', 'too late: nothing changed, and said so');
    const conv = await call<Array<{ autoReply: string }>>('getConversations', { ids: [conversationId] });
    assert.equal(conv.result.ok && conv.result.value[0]!.autoReply, 'stopped', 'r resumes; a late Undo does not');
    await call('resumeAutoReply', { conversationId });
    assert.equal(latest().state, 'cancelled');
    rx.respond = () => ({ status: 200 });
    void n;
  });

  it('a stray stop in the quiet period, undone: the customer is answered as if there had been no stop', async () => {
    type Entry = { kind: string; msgId: string; decision?: Record<string, unknown> | null };
    const decisionOf = async (conversationId: string, msgId: string) => {
      const t = await call<{ entries: Entry[] }>('getTranscript', { conversationId });
      return t.result.ok ? t.result.value.entries.find((e) => e.msgId === msgId)?.decision : undefined;
    };
    const repliesTo = (msgId: string) => rx.received.filter((r) => (r.body.message_info['reply_to'] as string[] | undefined)?.includes(msgId));
    const m = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'gail', from_user_type: 2, content: 'do you ship to Norway?' });
    const conversationId = String(m.body['conversation_id']);
    const msgId = String(m.body['msg_id']);
    const before = await decisionOf(conversationId, msgId);
    assert.deepEqual({ ...before }, { scheduled: true, reason: 'scheduled', outcome: 'pending', note: null, delivery: null });
    h.clock.advance(500);
    await call('stopAutoReply', { conversationId });
    assert.equal((await decisionOf(conversationId, msgId))?.['outcome'], 'cancelled');
    h.clock.advance(500);
    const undo = await call<{ previous: string; restoredReplies: number }>('resumeAutoReply', { conversationId, undoStop: true });
    assert.deepEqual(undo.result, { ok: true, value: { previous: 'stopped', restoredReplies: 0, undo: 'undone' } }, 'no delivery existed yet');
    assert.deepEqual(await decisionOf(conversationId, msgId), before, 'its why-line reads as before the stop');
    // The quiet period it had: 2 s after the message, not after the Undo.
    h.clock.advance(999);
    await h.quiesce();
    assert.equal(repliesTo(msgId).length, 0, 'not before its quiet period ends');
    h.clock.advance(1);
    const [got] = await eventually(() => repliesTo(msgId).length === 1 && repliesTo(msgId), 'the reply at the receiver');
    assert.equal(got!.body.message_info['content'], 'answer to: do you ship to Norway?');
    assert.equal(got!.body.message_info['to_user_id'], 'gail');
    await eventually(async () => (await decisionOf(conversationId, msgId))?.['outcome'] === 'answered', 'answered in the transcript');

    // Undone after the quiet period ran out: answered at once.
    const late = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'gail', from_user_type: 2, content: 'and to Iceland?' });
    const lateId = String(late.body['msg_id']);
    h.clock.advance(1000);
    await call('stopAutoReply', { conversationId });
    h.clock.advance(10_000);
    await call('resumeAutoReply', { conversationId, undoStop: true });
    await eventually(() => repliesTo(lateId).length === 1, 'the reply at once');
    assert.deepEqual(rx.received.at(-1)!.body.message_info['reply_to'], [lateId]);
    await h.quiesce();
    assert.equal(repliesTo(msgId).length, 1, 'the first message is not answered twice');
  });

  it('the request log shows rejected requests with their code and problem details', async () => {
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'x', from_user_type: 2, content: 'hi' }, { secret: 'wrong-secret-wrong-secret-wrong-secret' });
    type Logged = { code: string | null; problem: { detail: string } | null };
    const log = await eventually(async (): Promise<Logged[] | false> => {
      const r = await call<Logged[]>('listRequests', { onlyFailed: true });
      return r.result.ok && r.result.value.some((e) => e.code === 'invalid_signature') ? r.result.value : false;
    }, 'the rejected request in the log');
    const entry = log.find((e) => e.code === 'invalid_signature')!;
    assert.match(entry.problem!.detail, /signature does not match/);
  });

  it('assist from the console: a suggestion for the latest customer message, stored with its instruction, no message written', async () => {
    const m = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'frank', from_user_type: 2, content: 'can I change my address?' });
    const conversationId = String(m.body['conversation_id']);
    type Assist = { msgId: string; suggestion: { content: string; handoff: boolean }; context: { reused: boolean; matchedBy: string | null; messages: number } };
    const before = h.admin.conversations.byId(conversationId)!.messageCount;
    const asked = await call<Assist>('assist', { conversationId, instruction: 'be brief' });
    assert.ok(asked.result.ok, JSON.stringify(asked.result));
    assert.equal(asked.result.value.msgId, m.body['msg_id'], 'it answers the latest customer message');
    assert.equal(asked.result.value.suggestion.content, 'answer to: can I change my address?');
    assert.deepEqual(asked.result.value.context, { reused: true, matchedBy: 'conversation', messages: 1 });
    assert.equal(h.admin.conversations.byId(conversationId)!.messageCount, before, 'no message was appended');
    const t = await call<{ entries: Array<{ kind: string; instruction?: string | null }> }>('getTranscript', { conversationId });
    const suggestions = t.result.ok ? t.result.value.entries.filter((e) => e.kind === 'suggestion') : [];
    assert.deepEqual(suggestions.map((e) => e.instruction), ['be brief'], 'suggestions are stored and shown, with the instruction');
    await h.quiesce();
  });

  it('manages clients and the knowledge base, refusing bad settings and malformed imports whole', async () => {
    const added = await call<{ secret: string }>('addClient', { id: 'api-client', settings: { groupPolicy: 'all' } });
    assert.ok(added.result.ok);
    assert.equal((await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'v', content: 'hi' }, { client: 'api-client', secret: added.result.value.secret })).status, 200);
    const dup = await call('addClient', { id: 'api-client' });
    assert.equal(!dup.result.ok && dup.result.error.code, 'conflict');
    const bad = await call('updateClientSettings', { id: 'api-client', settings: { groupPolicy: 'sometimes' } });
    assert.equal(!bad.result.ok && bad.result.error.code, 'invalid_input');
    const meta = await call('updateClientSettings', { id: 'api-client', settings: { sendUrl: 'http://169.254.169.254/' } });
    assert.equal(!meta.result.ok && meta.result.error.code, 'invalid_input');
    const broken = await call('importKb', { fileName: 'kb.csv', text: 'question,answer\na,b\nc\n' });
    assert.ok(!broken.result.ok && /line 3/.test(broken.result.error.message));
    const listed = await call<unknown[]>('listKb', { search: 'zzz-none' });
    assert.deepEqual(listed.result.ok && listed.result.value, []);
    const ok = await call<{ imported: number }>('importKb', { fileName: 'kb.json', text: JSON.stringify([{ question: 'Q1?', answer: 'A1' }]) });
    assert.deepEqual(ok.result, { ok: true, value: { imported: 1 } });
  });

  it('dashboard stats: per-minute series over the requested window', async () => {
    const r = await call<{ minutes: number[]; requests: number[]; rejected: number[]; now: { pending: number } }>('stats', { minutes: 30 });
    assert.ok(r.result.ok);
    assert.equal(r.result.value.minutes.length, 30);
    assert.equal(r.result.value.requests.length, 30);
    assert.ok(r.result.value.requests.reduce((a, b) => a + b, 0) > 0, 'the requests of this suite are counted');
    assert.ok(r.result.value.rejected.reduce((a, b) => a + b, 0) >= 1);
  });

  it('a transcript entry carries what it shows, cut; getMessageInfo fetches the whole stored message_info', async () => {
    const data = `data:image/png;base64,${'A'.repeat(10_000)}`;
    const posted = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'whole-1', from_user_type: 2, files_info: [{ content: data, file_type: 'image' }], trace: 'tr-1' });
    assert.equal(posted.status, 200);
    type Entry = { id: number; kind: string; messageInfo?: Record<string, unknown>; stored?: { bytes: number; cut: string[] } };
    const t = await call<{ entries: Entry[] }>('getTranscript', { conversationId: posted.body['conversation_id'] });
    assert.ok(t.result.ok);
    const entry = t.result.value.entries.find((e) => e.kind === 'message')!;
    assert.deepEqual(entry.stored?.cut, ['files_info[0].content']);
    assert.equal(entry.messageInfo?.['trace'], undefined, 'unknown fields stay out of the transcript');
    assert.ok(!JSON.stringify(t.result).includes('A'.repeat(5000)), 'the file is cut');
    const whole = await call<{ messageId: number; conversationId: string; bytes: number; json: string }>('getMessageInfo', { messageId: entry.id });
    assert.ok(whole.result.ok);
    const info = JSON.parse(whole.result.value.json) as Record<string, unknown>;
    assert.deepEqual([info['trace'], (info['files_info'] as Array<{ content: string }>)[0]!.content], ['tr-1', data]);
    assert.deepEqual([whole.result.value.conversationId, whole.result.value.bytes], [posted.body['conversation_id'], Buffer.byteLength(whole.result.value.json)]);
    const missing = await call('getMessageInfo', { messageId: 999_999 });
    assert.equal(missing.status, 404);
    assert.equal(!missing.result.ok && missing.result.error.code, 'not_found');
  });

  it('refuses bad input and unknown methods as data, never as a crash', async () => {
    const bad = await call('getTranscript', { conversationId: 42 });
    assert.equal(bad.status, 400);
    assert.equal(!bad.result.ok && bad.result.error.code, 'invalid_input');
    const missing = await call('getTranscript', { conversationId: 'c_nope' });
    assert.equal(missing.status, 404);
    assert.equal(!missing.result.ok && missing.result.error.code, 'not_found');
    const unknown = await call('dropDatabase');
    assert.equal(unknown.status, 404);
    assert.equal(!unknown.result.ok && unknown.result.error.code, 'unknown_method');
  });

  it('pushes live events: a new message reaches an open console on its event stream', async () => {
    const controller = new AbortController();
    const res = await fetch(`${base}/api/events`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const reader = res.body!.getReader();
    const events: ConsoleEvent[] = [];
    const reading = (async () => {
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        buffer += new TextDecoder().decode(value);
        for (const m of buffer.matchAll(/^data: (.*)$/gm)) events.push(JSON.parse(m[1]!) as ConsoleEvent);
        buffer = buffer.slice(buffer.lastIndexOf('\n') + 1);
      }
    })();
    // Pushed, not asked for: how fast is for the benches, not a timed assertion on a shared machine.
    const m = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'erin', from_user_type: 2, content: 'live?' });
    await eventually(() => events.some((e) => e.type === 'conversation' && e.conversationId === m.body['conversation_id']), 'the live event', 5000);
    assert.ok(events.some((e) => e.type === 'request' && e.status === 200));
    controller.abort();
    await reading;
  });
});
