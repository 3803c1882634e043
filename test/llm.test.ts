import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { startFakeOpenAi } from './helpers/fake-openai.ts';
import { startReceiver, eventually, type Receiver } from './helpers/receiver.ts';
import { keyFileBox } from '../src/main/auth/secret-box.ts';
import { engineConfigSchema } from '../src/shared/engine-config.ts';
import { cli, cliAsync, type CliResult } from './helpers/processes.ts';
import { driveClock } from './helpers/drive-clock.ts';
import { spawn } from 'node:child_process';

const KEY = 'sk-live-VERY-SECRET-KEY-0123456789abcdef';
const FALLBACK = 'A colleague will answer shortly.';

/** The CLI with its own environment and standard input, without blocking the fake server. */
function cliWith(dataDir: string, io: { env?: Record<string, string>; input?: string }, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['src/main/cli/index.ts', ...args, '--data-dir', dataDir], {
      cwd: new URL('../', import.meta.url).pathname,
      env: { ...process.env, ...io.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(io.input ?? '');
  });
}

describe('LLM engines end to end', () => {
  let h: Harness;
  let fake: Awaited<ReturnType<typeof startFakeOpenAi>>;
  let rx: Receiver;
  const logs: string[] = [];

  before(async () => {
    fake = await startFakeOpenAi();
    rx = await startReceiver();
    // In-process: the engines' own budgets and back-offs here run on the hand-moved clock.
    h = await startHarness({ clockStart: Date.now(), config: { engineWorker: false }, log: (line) => logs.push(line) });
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
    const t = await h.service.console.asOwner.getTranscript({ conversationId: String(r.body['conversation_id']), limit: 50 });
    const reply = t.entries.find((e) => e.kind === 'reply')!;
    assert.equal(reply.engine, 'local');
    assert.equal(reply.sources?.[0]?.id, 1);
  });

  it('the model reads group lines and staff lines by the nickname sent with each message, else by the sender id', async () => {
    const group = { group_id: 'g-nick', to_user_id: 'bot', from_user_type: 1 };
    // A human has taken over this group: its messages are stored, and no auto reply is composed.
    const posted = [await h.post({ event_type: 'cmd_dialog', msg_id: mid(), ...group, from_user_id: 'agent-9', content: 'stop_auto_reply' })];
    posted.push(await h.post({ event_type: 'auto_dialog', msg_id: mid(), ...group, from_user_id: 'u-alice', nickname: 'Alice', content: 'my order is late' }));
    posted.push(await h.post({ event_type: 'auto_dialog', msg_id: mid(), ...group, from_user_id: 'u-7', content: 'mine too' }));
    posted.push(await h.post({ event_type: 'auto_dialog', msg_id: mid(), ...group, from_user_id: 'agent-9', from_user_type: 3, nick_name: 'Kim', content: 'checking now' }));
    assert.deepEqual(posted.map((p) => p.status), [200, 200, 200, 200]);
    const r = await h.post({ event_type: 'assist_dialog', msg_id: mid(), ...group, from_user_id: 'u-alice', nickname: 'Alice', content: 'any news?' });
    assert.equal(r.status, 200);
    const said = fake.calls.at(-1)!.body.messages.slice(1).map((m) => m.content);
    assert.deepEqual(said.slice(-4), ['Alice: my order is late', 'u-7: mine too', '[staff Kim] checking now', 'Alice: any news?']);
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
    // The back-off waits between the three attempts run on the service's clock.
    const { result } = await driveClock(
      h.clock,
      eventually(() => h.admin.messages.replyTrace(row.id)?.outcome === 'handoff' && h.admin.messages.replyTrace(row.id), 'handoff', 10_000),
      { stepMs: 100 },
    );
    assert.equal(result.status, 'fulfilled');
    const trace = (result as PromiseFulfilledResult<NonNullable<ReturnType<typeof h.admin.messages.replyTrace>>>).value;
    assert.match(trace.note ?? '', /engine local: HTTP 503 after 3 attempts/);
    assert.ok(h.admin.conversations.byId(String(n.body['conversation_id']))?.needsHuman);
    void m;
  });

  it('the API key never appears in logs, the request log or the console API', async () => {
    const everything = JSON.stringify([
      logs,
      h.admin.requestLog.recent(1000),
      await h.service.console.asOwner.listClients({}),
      await h.service.console.asOwner.listRequests({ onlyFailed: false, limit: 1000 }),
      await h.service.console.asOwner.listConversations({ view: 'all', limit: 200 }),
      await h.service.console.asOwner.stats({ minutes: 60 }),
    ]);
    assert.ok(!everything.includes(KEY));
    assert.ok(!everything.includes('VERY-SECRET'));
    const list = cli(h.dataDir, 'engines', 'list');
    assert.match(list.stdout, /local\s+llama3\.1:8b\s+\S+\s+key: set/);
    assert.ok(!list.stdout.includes(KEY));
  });

  it('the console lists engines (key only as set) and lets a client choose one', async () => {
    const engines = await h.service.console.asOwner.listEngines({});
    assert.deepEqual(engines.map((e) => [e.name, e.hasKey]), [['kb', false], ['local', true]]);
    assert.ok(!JSON.stringify(engines).includes(KEY));
    const chosen = await h.service.console.asOwner.updateClientSettings({ id: 'plain', settings: { engine: 'local' } });
    assert.equal(chosen.settings['engine'], 'local');
    await assert.rejects(h.service.console.asOwner.updateClientSettings({ id: 'plain', settings: { engine: 'nope' } }), /no engine "nope"/);
    await h.service.console.asOwner.updateClientSettings({ id: 'plain', settings: { engine: 'kb' } });
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

  it('engines test exits 1 with a one-line reason when the probe fails (a 401)', async () => {
    fake.respond = () => ({ status: 401, body: { error: { message: 'invalid api key' } } });
    const r = await cliAsync(h.dataDir, 'engines', 'test', 'local');
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^error: engine local failed the probe after \d+ ms: HTTP 401 \(check the model name, URL and key\)\n$/);
    assert.ok(!`${r.stdout}${r.stderr}`.includes(KEY));
  });

  it('website and assist handoffs record their cause; the console transcript shows it', async () => {
    const causeOf = async (conversationId: unknown, kind: 'reply' | 'suggestion') => {
      const t = await h.service.console.asOwner.getTranscript({ conversationId: String(conversationId), limit: 50 });
      const entry = t.entries.filter((e) => e.kind === kind).at(-1)!;
      assert.equal(entry.handoff, true);
      return entry.cause;
    };
    fake.respond = () => ({ body: { choices: [{ message: { content: 'Sorry. [[HANDOFF]]' } }] } });
    const web = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'v9', content: 'Can I pay in yen?' });
    assert.equal((web.body['reply'] as { handoff: boolean }).handoff, true);
    assert.equal(await causeOf(web.body['conversation_id'], 'reply'), 'the model said it cannot answer');
    fake.respond = () => ({ status: 401 });
    const assist = await h.post({ event_type: 'assist_dialog', msg_id: mid(), from_user_id: 'v10', content: 'Can I pay in yen?' });
    assert.equal((assist.body['suggestion'] as { handoff: boolean }).handoff, true);
    assert.match((await causeOf(assist.body['conversation_id'], 'suggestion')) ?? '', /^engine local: HTTP 401 \(check the model name, URL and key\)$/);
    h.addClient('kbco', {});
    const kb = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'v11', content: 'Do you sell gift cards?' }, { client: 'kbco' });
    assert.equal((kb.body['reply'] as { handoff: boolean }).handoff, true);
    assert.match((await causeOf(kb.body['conversation_id'], 'reply')) ?? '', /no knowledge-base entry matched|below 0\.45/);
  });

  it('a hung model with default settings: website_dialog hands off (200) inside the 30 s budget, after 2 attempts', async () => {
    // Default settings (20 s per attempt, 2 retries) behind the default 30 s overall budget.
    h.admin.engines.save('hung', engineConfigSchema.parse({ baseUrl: fake.baseUrl, model: 'slow-model' }), null, Date.now());
    h.addClient('slowco', { engine: 'hung', fallbackText: FALLBACK } as never);
    fake.respond = () => ({ delayMs: 3_600_000, body: {} });
    const before = fake.calls.length;
    const msgId = mid();
    const { result, elapsedMs } = await driveClock(h.clock, h.post({ event_type: 'website_dialog', msg_id: msgId, from_user_id: 'v20', content: 'Is anyone there?' }, { client: 'slowco' }));
    assert.equal(result.status, 'fulfilled');
    const r = (result as PromiseFulfilledResult<Awaited<ReturnType<typeof h.post>>>).value;
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body['reply'] && { content: (r.body['reply'] as { content: string }).content, handoff: (r.body['reply'] as { handoff: boolean }).handoff }, { content: FALLBACK, handoff: true });
    // The budget itself shows in the cause below ("no answer within 30000 ms") and in the two
    // attempts; the clock time to the response also covers the handoff's write, during which the
    // driver keeps stepping the clock (a few seconds of it on two busy cores).
    assert.ok(elapsedMs <= 36_000, `answered after ${elapsedMs} ms of clock time`);
    assert.equal(fake.calls.length - before, 2, 'a 20 s attempt, a 0.5 s back-off, then an attempt cut to the 9.5 s left');
    const conversationId = String(r.body['conversation_id']);
    assert.equal(h.admin.conversations.byId(conversationId)?.needsHuman, true);
    const t = await h.service.console.asOwner.getTranscript({ conversationId, limit: 50 });
    const reply = t.entries.find((e) => e.kind === 'reply')!;
    assert.match(reply.cause ?? '', /^engine hung timed out: no answer within 30000 ms/);
    assert.equal(reply.engine, 'hung');
  });

  it('a hung model with default settings: assist_dialog answers 504 engine_timeout when its 30 s budget is spent', async () => {
    fake.respond = () => ({ delayMs: 3_600_000, body: {} });
    const before = fake.calls.length;
    const msgId = mid();
    const { result, elapsedMs } = await driveClock(h.clock, h.post({ event_type: 'assist_dialog', msg_id: msgId, from_user_id: 'v21', content: 'Is anyone there?' }, { client: 'slowco' }));
    const r = (result as PromiseFulfilledResult<Awaited<ReturnType<typeof h.post>>>).value;
    assert.equal(r.status, 504);
    assert.equal(r.body.code, 'engine_timeout');
    assert.match(String(r.body['detail']), /^engine hung timed out: no answer within 30000 ms/);
    assert.ok(elapsedMs >= 30_000 && elapsedMs <= 30_250, `answered after ${elapsedMs} ms of engine time`);
    assert.equal(fake.calls.length - before, 2);
    assert.equal(h.admin.idempotency.get('slowco', 'assist_dialog', msgId), undefined, 'nothing stored');
  });

  it('engines add reads the key from --api-key-env or --api-key-stdin, never printing it; --api-key warns', async () => {
    const ENV_KEY = 'sk-from-ENV-0123456789abcdef';
    const STDIN_KEY = 'sk-from-STDIN-0123456789abcdef';
    fake.respond = () => ({ body: { choices: [{ message: { content: 'ready' } }] } });
    const outputs: CliResult[] = [];
    const run = async (io: { env?: Record<string, string>; input?: string }, ...args: string[]) => {
      const r = await cliWith(h.dataDir, io, ...args);
      outputs.push(r);
      return r;
    };
    const added = await run({ env: { HOSTED_API_KEY: ENV_KEY } }, 'engines', 'add', 'hosted', '--base-url', fake.baseUrl, '--model', 'm', '--api-key-env', 'HOSTED_API_KEY');
    assert.equal(added.status, 0, added.stderr);
    assert.match(added.stdout, /engine hosted added: m at .* \(API key stored encrypted\)/);
    assert.equal(added.stderr, '');
    assert.equal((await run({}, 'engines', 'test', 'hosted')).status, 0);
    assert.equal(fake.calls.at(-1)!.headers['authorization'], `Bearer ${ENV_KEY}`);

    const updated = await run({ input: `  ${STDIN_KEY}\n` }, 'engines', 'add', 'hosted', '--api-key-stdin');
    assert.equal(updated.status, 0, updated.stderr);
    assert.match(updated.stdout, /engine hosted updated: m at .* \(API key stored encrypted\)/);
    assert.equal((await run({}, 'engines', 'test', 'hosted')).status, 0);
    assert.equal(fake.calls.at(-1)!.headers['authorization'], `Bearer ${STDIN_KEY}`, 'read from standard input, trimmed');

    const unset = await run({}, 'engines', 'add', 'hosted', '--api-key-env', 'NO_SUCH_VARIABLE_HERE');
    assert.equal(unset.status, 2);
    assert.match(unset.stderr, /^error: --api-key-env NO_SUCH_VARIABLE_HERE: that environment variable is unset or empty$/m);
    const empty = await run({ env: { EMPTY_KEY: '' } }, 'engines', 'add', 'hosted', '--api-key-env', 'EMPTY_KEY');
    assert.match(empty.stderr, /--api-key-env EMPTY_KEY: that environment variable is unset or empty/);
    const keyAsName = await run({}, 'engines', 'add', 'hosted', '--api-key-env', ENV_KEY);
    assert.match(keyAsName.stderr, /--api-key-env takes the NAME of an environment variable/);
    assert.match((await run({ input: '\n' }, 'engines', 'add', 'hosted', '--api-key-stdin')).stderr, /--api-key-stdin: standard input was empty/);
    assert.match((await run({ input: 'two words' }, 'engines', 'add', 'hosted', '--api-key-stdin')).stderr, /--api-key-stdin: the key has spaces/);
    assert.match((await run({ env: { K: ENV_KEY } }, 'engines', 'add', 'hosted', '--api-key-env', 'K', '--api-key-stdin')).stderr, /give the API key one way only, not --api-key-env and --api-key-stdin/);
    assert.equal(fake.calls.at(-1)!.headers['authorization'], `Bearer ${STDIN_KEY}`, 'refused commands kept the stored key');

    const onLine = await run({}, 'engines', 'add', 'hosted', '--api-key', KEY);
    assert.equal(onLine.status, 0);
    assert.match(onLine.stderr, /^warning: --api-key puts the key on the command line, visible to other local users .*--api-key-env NAME or --api-key-stdin\n$/);

    const printed = JSON.stringify(outputs);
    for (const k of [ENV_KEY, STDIN_KEY, KEY]) assert.ok(!printed.includes(k), 'no key in any output');
    assert.match(cli(h.dataDir, 'engines', 'list').stdout, /hosted\s+m\s+\S+\s+key: set/);
  });

  it('the engines help lists --api-key-env, --api-key-stdin and --handoff-marker', () => {
    const help = cli(h.dataDir, '--help');
    assert.match(help.stdout, /--api-key-env VAR \| --api-key-stdin/);
    assert.match(help.stdout, /--handoff-marker TEXT/);
  });
});
