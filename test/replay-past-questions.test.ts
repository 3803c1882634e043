import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { cli, cliAsync, secretFrom, spawnServe, type ServeProcess } from './helpers/processes.ts';
import { signBody } from './helpers/sign.ts';
import { startReceiver, eventually, type Receiver } from './helpers/receiver.ts';
import { openDatabase } from '../src/main/store/db.ts';
import { createStore } from '../src/main/store/index.ts';
import { databasePath } from '../src/main/store/data-dir.ts';
import { createReplay } from '../src/main/replay/replay.ts';
import { systemClock } from '../src/shared/clock.ts';
import { DEFAULT_FALLBACK_TEXT } from '../src/main/config/server-config.ts';

const EXACT = 'How do I reset my password?';
const UNCOVERED = 'How do I delete my account?';
const PARTIAL = ['password reset link expired', 'my order where', 'reset it please, the password', 'where can I see orders'];
const AUTO = ['Where is my order?', 'can you reset my password'];

/**
 * An OpenAI-compatible server that counts requests in flight. It holds each answer until `batch`
 * requests are waiting together (a barrier, not a delay: on a loaded machine calls made together can
 * still arrive far apart), so a replay that keeps its cap is seen at exactly its cap; a replay that
 * never reaches `batch` is answered after a second, and its count shows it.
 */
async function startCountingModel() {
  let inFlight = 0;
  let most = 0;
  let calls = 0;
  let batch = 1;
  let waiting: Array<() => void> = [];
  let fallback: ReturnType<typeof setTimeout> | undefined;
  const release = () => {
    clearTimeout(fallback);
    const now = waiting;
    waiting = [];
    for (const answer of now) answer();
  };
  const server: Server = createServer((req, res) => {
    inFlight++;
    calls++;
    most = Math.max(most, inFlight);
    req.resume();
    req.on('end', () => {
      waiting.push(() => {
        inFlight--;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'From the model.' } }], usage: { prompt_tokens: 40, completion_tokens: 4, total_tokens: 44 } }));
      });
      if (waiting.length >= batch) release();
      else if (waiting.length === 1) fallback = setTimeout(release, 1000);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    stats: () => ({ calls, most }),
    /** Answers once this many calls wait together; resets the highest count seen. */
    answerInBatchesOf: (n: number) => ((batch = n), (most = 0)),
    close: () => new Promise<void>((r) => (release(), server.closeAllConnections(), server.close(() => r()))),
  };
}

describe('eval replay: past questions answered offline against a candidate', () => {
  let dataDir: string;
  let server: ServeProcess;
  let secret: string;
  let rx: Receiver;
  let model: Awaited<ReturnType<typeof startCountingModel>>;
  let n = 0;

  const send = async (event: string, content: string, from = `cust-${n}`): Promise<Record<string, unknown>> => {
    const body = signBody('acme', secret, { event_type: event, msg_id: `r-${++n}`, from_user_id: from, from_user_type: 2, content }, Math.floor(Date.now() / 1000));
    const res = await fetch(server.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(res.status, 200);
    return (await res.json()) as Record<string, unknown>;
  };
  const counts = (): Record<string, number> => {
    const db = new DatabaseSync(databasePath(dataDir), { readOnly: true });
    try {
      const count = (table: string): number => Number((db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
      return { messages: count('messages'), replies: count('replies'), deliveries: count('deliveries'), conversations: count('conversations'), kb: count('kb_entries') };
    } finally {
      db.close();
    }
  };
  const replayJson = (runId: number) => {
    const store = createStore(openDatabase(databasePath(dataDir)));
    try {
      return { run: store.replay.run(runId)!, rows: store.replay.rows(runId, { changedOnly: false, limit: 1000 }) };
    } finally {
      store.close();
    }
  };
  const runIdOf = (stdout: string): number => Number(/^replay run (\d+) done/m.exec(stdout)?.[1]);

  before(async () => {
    rx = await startReceiver();
    model = await startCountingModel();
    dataDir = mkdtempSync(join(tmpdir(), 'sb-replay-'));
    secret = secretFrom(cli(dataDir, 'clients', 'add', 'acme', '--send-url', rx.url, '--quiet-seconds', '0').stdout);
    assert.equal(cli(dataDir, 'kb', 'add', '--question', EXACT, '--answer', 'Use "Forgot password" on the sign-in page.').status, 0);
    assert.equal(cli(dataDir, 'kb', 'add', '--question', 'Where is my order?', '--answer', 'Open Orders to track it.').status, 0);
    assert.equal(cli(dataDir, 'engines', 'add', 'local', '--base-url', model.baseUrl, '--model', 'm', '--timeout-ms', '10000', '--retries', '0').status, 0);
    server = await spawnServe(dataDir);
    for (const q of [EXACT, UNCOVERED, ...PARTIAL]) await send('website_dialog', q);
    // One customer each: two messages of one conversation may share one answer (a newer message
    // drops the reply still being made to the one before), and this test needs both replies.
    for (const [i, q] of AUTO.entries()) await send('auto_dialog', q, `im-customer-${i}`);
    await eventually(() => rx.received.length >= AUTO.length || undefined, 'the auto replies delivered', 45_000);
  });
  after(async () => {
    server.child.kill('SIGTERM');
    await server.exit();
    await rx.close();
    await model.close();
  });

  it('a threshold change flips exactly the questions whose score lies between the two thresholds, and nothing is delivered or written', async () => {
    const was = counts();
    const received = rx.received.length;
    const r = await cliAsync(dataDir, 'eval', 'replay', '--since', '1h', '--threshold', '0.8', '--yes');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /^8 questions from .* to /m, 'the estimate comes first');
    assert.match(r.stderr, /no LLM call: the built-in engine answers both ways/);
    const { run, rows } = replayJson(runIdOf(r.stdout));
    assert.equal(run.status, 'done');
    assert.deepEqual(rows.map((x) => x.question), [EXACT, UNCOVERED, ...PARTIAL, ...AUTO]);
    // Answered before at serve's default 0.55, handed off at 0.8: those scoring in between, whatever the matcher scores.
    const expected = rows.filter((x) => x.before.score !== null && x.before.score >= 0.55 && x.before.score < 0.8).map((x) => x.question);
    assert.ok(expected.length > 0, `some question scores between 0.55 and 0.8: ${JSON.stringify(rows.map((x) => [x.question, x.before.score]))}`);
    assert.deepEqual(rows.filter((x) => x.change === 'now_handoff').map((x) => x.question), expected);
    assert.equal(rows.filter((x) => x.change !== 'now_handoff' && x.change !== 'same').length, 0);
    assert.equal(rows[0]!.change, 'same', 'the exact question is answered both ways');
    assert.equal(run.totals!.before.answered - run.totals!.after.answered, expected.length);
    assert.equal(run.totals!.changed.now_handoff, expected.length);
    for (const q of expected) assert.ok(r.stdout.includes(q), `the report shows "${q}" side by side`);
    assert.match(r.stdout, /^answered\s+\d+\s+\d+$/m);
    assert.deepEqual(counts(), was, 'no message, reply, delivery, conversation or entry written');
    assert.equal(rx.received.length, received, 'the receiver got nothing');
  });

  it('an entry added to the candidate knowledge base turns its handoff into an answer, and the KB stays as it was', async () => {
    const was = counts();
    const store = createStore(openDatabase(databasePath(dataDir)));
    const deps = { store, openKey: () => '', kbThreshold: 0.45, engineTimeoutMs: 5000, fallbackText: DEFAULT_FALLBACK_TEXT, contextLines: 50, clock: systemClock };
    try {
      await assert.rejects(createReplay(deps).plan({ since: '1h', withProposals: true }, Date.now()), /no proposals store in this build/);
      // The proposals store's pendingChanges, as the Learn view's store will export it.
      const replay = createReplay({ ...deps, pendingChanges: () => ({ entries: [{ question: UNCOVERED, answer: 'Settings, then Delete account.', phrasings: [] }], phrasings: [] }) });
      const plan = await replay.plan({ since: '1h', withProposals: true }, Date.now());
      assert.deepEqual(plan.proposals, { entries: 1, phrasings: 0, orphaned: 0 });
      const result = await replay.run(plan, { signal: new AbortController().signal });
      const changed = result.rows.filter((x) => x.change !== 'same');
      assert.deepEqual(changed.map((x) => [x.question, x.change, x.after.content]), [[UNCOVERED, 'now_answered', 'Settings, then Delete account.']]);
      assert.equal(changed[0]!.before.handoff, true);
      // Through the CLI, serve's proposals store: a pending proposal answers it in the candidate only.
      store.proposals.add({ kind: 'entry', source: 'agent', question: UNCOVERED, answer: 'Settings, then Delete account.', entryId: null, conversationId: null, messageIds: [], operator: null, now: Date.now() });
      const viaCli = await cliAsync(dataDir, 'eval', 'replay', '--since', '1h', '--with-proposals', '--yes');
      assert.equal(viaCli.status, 0, viaCli.stderr);
      const { rows } = replayJson(runIdOf(viaCli.stdout));
      assert.deepEqual(rows.filter((x) => x.change !== 'same').map((x) => [x.question, x.change]), [[UNCOVERED, 'now_answered']]);
      assert.equal(store.proposals.pendingCount(), 1, 'still pending: a replay approves nothing');
    } finally {
      store.close();
    }
    assert.deepEqual({ ...counts(), proposals: undefined }, { ...was, proposals: undefined });
  });

  it('an LLM candidate runs under the concurrency cap, shows its estimate, and reports the tokens the API counted', async () => {
    const was = counts();
    const before = model.stats().calls;
    model.answerInBatchesOf(2);
    const r = await cliAsync(dataDir, 'eval', 'replay', '--since', '1h', '--engine', 'local', '--concurrency', '2', '--yes');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /^8 LLM calls, 2 at a time: about \d+ prompt tokens and up to 3200 answer tokens; about \d+ s at the engines' time-out, an upper bound$/m);
    assert.equal(model.stats().calls - before, 8, 'one call per question, after only: before is the built-in engine');
    assert.equal(model.stats().most, 2, 'two at once, never more');
    const { run } = replayJson(runIdOf(r.stdout));
    assert.deepEqual([run.totals!.after.llmCalls, run.totals!.after.callsWithUsage, run.totals!.after.promptTokens, run.totals!.after.completionTokens], [8, 8, 320, 32]);
    assert.match(r.stdout, /^LLM after: 8 calls, 352 tokens \(320 prompt, 32 answer; 8 of 8 calls reported usage\), \d+ ms a call on average$/m);
    assert.deepEqual(counts(), was);
    model.answerInBatchesOf(4);
    const again = await cliAsync(dataDir, 'eval', 'replay', '--since', '1h', '--engine', 'local', '--concurrency', '4', '--yes');
    assert.match(again.stderr, /about \d+ s at the latency measured in earlier replays/, 'the next estimate uses the latency measured');
    assert.equal(model.stats().most, 4);
  });

  it('runs are kept, listed and shown again; bad flags get one clear line', async () => {
    const runs = cli(dataDir, 'eval', 'runs');
    assert.equal(runs.status, 0, runs.stderr);
    const lines = runs.stdout.trim().split('\n');
    assert.ok(lines.length >= 3);
    assert.match(lines.at(-1)!, /^1\t.*\tdone\tall clients\tthreshold 0\.8 \(was 0\.55\)\t8 questions, answered \d+ → \d+, \d+ changed$/);
    const show = cli(dataDir, 'eval', 'show', '1');
    assert.equal(show.status, 0, show.stderr);
    assert.match(show.stdout, /^replay run 1, .*, done: threshold 0\.8 \(was 0\.55\)$/m);
    assert.match(show.stdout, /^ {2}before: answered \(0\.\d+\) \[kb\]: /m);
    assert.match(show.stdout, /^ {2}after: {2}handoff \(0\.\d+\) \[kb\]: best match scored/m);
    const bads: Promise<{ args: readonly string[]; message: RegExp; bad: Awaited<ReturnType<typeof cliAsync>> }>[] = [];
    for (const [args, message] of [
      [['eval', 'replay', '--since', '7x', '--threshold', '0.2'], /^error: --since takes a number and a unit \(m, h, d or w\), like 7d or 24h; got "7x"$/m],
      [['eval', 'replay', '--since', '7d', '--threshold', '2'], /^error: --threshold must be a number from 0 to 1/m],
      [['eval', 'replay', '--since', '7d', '--threshold', '0.2', '--concurrency', '0'], /^error: --concurrency must be a whole number from 1 to 16, got "0"$/m],
      [['eval', 'replay', '--since', '7d', '--threshold', '0.2'], /^error: add --yes to run without being asked/m],
      [['eval', 'show', '99'], /^error: no replay run 99; see "eval runs"$/m],
    ] as const) {
      bads.push(cliAsync(dataDir, ...args).then((bad) => ({ args, message, bad })));
    }
    // Side by side: each is a process start, and none writes.
    for (const { args, message, bad } of await Promise.all(bads)) {
      assert.equal(bad.status, 2, `${args.join(' ')}: ${bad.stdout}`);
      assert.match(bad.stderr, message);
    }
  });
});
