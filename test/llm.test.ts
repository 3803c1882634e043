import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { startFakeOpenAi } from './helpers/fake-openai.ts';
import { startReceiver, eventually, type Receiver } from './helpers/receiver.ts';
import { keyFileBox } from '../src/main/auth/secret-box.ts';
import { engineConfigSchema } from '../src/shared/engine-config.ts';
import { cli, cliAsync } from './helpers/processes.ts';

const KEY = 'sk-live-VERY-SECRET-KEY-0123456789abcdef';

describe('LLM engines end to end', () => {
  let h: Harness;
  let fake: Awaited<ReturnType<typeof startFakeOpenAi>>;
  let rx: Receiver;
  const logs: string[] = [];

  before(async () => {
    fake = await startFakeOpenAi();
    rx = await startReceiver();
    h = await startHarness({ clockStart: Date.now(), log: (line) => logs.push(line) });
    h.admin.kb.add('Do you ship to Norway?', 'Yes, within 5 days.', 0);
    h.admin.engines.save('local', engineConfigSchema.parse({ baseUrl: fake.baseUrl, model: 'llama3.1:8b', timeoutMs: 2000 }), keyFileBox(`${h.dataDir}/secret.key`).seal(KEY), Date.now());
    h.addClient('acme', { sendUrl: rx.url, engine: 'local' } as never);
    h.addClient('plain', {});
  });
  after(async () => {
    await h.stop();
    await fake.close();
    await rx.close();
  });

  it('a client set to an LLM engine gets generated answers, grounded, with the sources recorded', async () => {
    fake.respond = (call) => ({ body: { choices: [{ message: { content: `Model says: ${call.body.messages.at(-1)!.content}` } }] } });
    const r = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'v1', content: 'Do you ship to Norway?' });
    assert.equal(r.status, 200);
    assert.deepEqual((r.body['reply'] as { content: string }).content, 'Model says: Do you ship to Norway?');
    assert.equal(fake.calls.at(-1)!.headers['authorization'], `Bearer ${KEY}`);
    assert.match(fake.calls.at(-1)!.body.messages[0]!.content, /Yes, within 5 days\./, 'grounded in the knowledge base');
    const t = await h.service.console.handlers.getTranscript({ conversationId: String(r.body['conversation_id']), limit: 50 });
    const reply = t.entries.find((e) => e.kind === 'reply')!;
    assert.equal(reply.engine, 'local');
    assert.equal(reply.sources?.[0]?.id, 1);
  });

  it('other clients keep the built-in knowledge base', async () => {
    const before = fake.calls.length;
    const r = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'v2', content: 'Do you ship to Norway?' }, { client: 'plain' });
    assert.equal((r.body['reply'] as { content: string }).content, 'Yes, within 5 days.');
    assert.equal(fake.calls.length, before);
  });

  it('an auto reply from the model is delivered; a failing model hands off with the cause in the trace', async () => {
    const m = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'c1', from_user_type: 2, content: 'Where is my order?' });
    h.clock.advance(2000);
    await eventually(() => rx.received.length === 1, 'the delivered reply');
    assert.equal(rx.received[0]!.body.message_info['content'], 'Model says: Where is my order?');
    fake.respond = () => ({ status: 503 });
    const n = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'c2', from_user_type: 2, content: 'hello?' });
    h.clock.advance(2000);
    const row = h.admin.messages.findAutoMessage('acme', String(n.body['msg_id']))!;
    const trace = await eventually(() => h.admin.messages.replyTrace(row.id)?.outcome === 'handoff' && h.admin.messages.replyTrace(row.id), 'handoff', 10_000);
    assert.match(trace.note ?? '', /engine local: HTTP 503 after 3 attempts/);
    assert.ok(h.admin.conversations.byId(String(n.body['conversation_id']))?.needsHuman);
    void m;
  });

  it('the API key never appears in logs, the request log or the console API', async () => {
    const everything = JSON.stringify([
      logs,
      h.admin.requestLog.recent(1000),
      await h.service.console.handlers.listClients({}),
      await h.service.console.handlers.listRequests({ onlyFailed: false, limit: 1000 }),
      await h.service.console.handlers.listConversations({ limit: 1000 }),
      await h.service.console.handlers.stats({ minutes: 60 }),
    ]);
    assert.ok(!everything.includes(KEY));
    assert.ok(!everything.includes('VERY-SECRET'));
    const list = cli(h.dataDir, 'engines', 'list');
    assert.match(list.stdout, /local\s+llama3\.1:8b\s+\S+\s+key: set/);
    assert.ok(!list.stdout.includes(KEY));
  });

  it('the console lists engines (key only as set) and lets a client choose one', async () => {
    const engines = await h.service.console.handlers.listEngines({});
    assert.deepEqual(engines.map((e) => [e.name, e.hasKey]), [['kb', false], ['local', true]]);
    assert.ok(!JSON.stringify(engines).includes(KEY));
    const chosen = await h.service.console.handlers.updateClientSettings({ id: 'plain', settings: { engine: 'local' } });
    assert.equal(chosen.settings['engine'], 'local');
    await assert.rejects(h.service.console.handlers.updateClientSettings({ id: 'plain', settings: { engine: 'nope' } }), /no engine "nope"/);
    await h.service.console.handlers.updateClientSettings({ id: 'plain', settings: { engine: 'kb' } });
  });

  it('engines test reports latency and the answer; clients set refuses an unknown engine', async () => {
    fake.respond = () => ({ body: { choices: [{ message: { content: 'I can help with orders and shipping.' } }] } });
    const r = await cliAsync(h.dataDir, 'engines', 'test', 'local');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /engine local answered in \d+ ms:\nI can help with orders and shipping\./);
    const bad = cli(h.dataDir, 'clients', 'set', 'plain', '--engine', 'gpt-9');
    assert.match(bad.stderr, /--engine must be one of kb, local, got "gpt-9"/);
    assert.equal(cli(h.dataDir, 'clients', 'set', 'plain', '--engine', 'local').status, 0);
  });
});
