import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from './helpers/postgres.ts';
import { addPgClient, createInstallationDatabase } from './helpers/pg-node.ts';
import { startFakeOpenAi } from './helpers/fake-openai.ts';
import { eventually } from './helpers/receiver.ts';
import { keyFileBox } from '../src/main/auth/secret-box.ts';
import { serverConfigSchema } from '../src/main/config/server-config.ts';
import { startPgService, type RunningPgService } from '../src/main/pg-service.ts';
import { manualClock, type ManualClock } from '../src/shared/clock.ts';
import { REPLAY_HEARTBEAT_MS, REPLAY_STALE_MS } from '../src/main/replay/replay-runs.ts';
import { ConsoleError } from '../src/main/console-api/console-error.ts';

const T = Date.UTC(2026, 0, 1);
const QUESTIONS = ['Do you ship abroad?', 'Can I pay by card?', 'Where is my parcel?'];
/** Each question answered by the built-in engine before and by the chat model after, one call at a time. */
const REQUEST = { since: '1h', engine: 'slow', concurrency: 1, withProposals: false, limit: 100 };

/**
 * A console replay on two PostgreSQL nodes (issue 30): the run is node A's, and node B, which a
 * load balancer may send any console call to, leaves it running when B starts, shows its progress,
 * refuses a second run, and cancels it through the run's row, which A reads at its next heartbeat.
 */
describe('a replay run on two PostgreSQL nodes', { skip: postgresSkipReason(), timeout: 60_000 }, () => {
  let server: PgServer;
  let fake: Awaited<ReturnType<typeof startFakeOpenAi>>;
  const nodes: RunningPgService[] = [];
  const clocks: ManualClock[] = [];
  let storeUrl = '';
  let keyFile = '';
  /** A node of the installation on `clock`: in-process, its console handlers called directly. */
  const startNode = async (nodeId: string, clock: ManualClock): Promise<RunningPgService> => {
    const config = serverConfigSchema.parse({ port: 0, host: '127.0.0.1', engineTimeoutMs: 600_000 });
    const node = await startPgService({ config, storeUrl, secretBox: keyFileBox(keyFile), nodeId, clock, log: () => {} });
    nodes.push(node);
    return node;
  };
  /** Resolves when the model is asked its second question: the first is answered, the second waits. */
  const secondCall = Promise.withResolvers<void>();

  before(async () => {
    server = await startPostgres();
    storeUrl = await createInstallationDatabase(server.url);
    keyFile = join(mkdtempSync(join(tmpdir(), 'sb-pg-replay-runs-')), 'shared.key');
    keyFileBox(keyFile).seal('make the key file');
    // Node A migrates the new database; its clock drives its heartbeats. Node B's runs half a
    // time-out ahead, so a B that failed runs by their start (as a starting node did) would fail A's.
    clocks.push(manualClock(T), manualClock(T + REPLAY_STALE_MS / 2));
    await startNode('node-a', clocks[0]!);
    fake = await startFakeOpenAi();
    // The first question is answered at once; the second waits (cleared when the fake closes).
    fake.respond = (_call, index) => {
      if (index === 1) secondCall.resolve();
      return { body: { choices: [{ message: { role: 'assistant', content: 'Yes, we do.' } }] }, delayMs: index === 0 ? 0 : 600_000 };
    };
    await addPgClient(storeUrl, keyFile, 'shop', 'pg-replay-runs-secret-0123456789', {});
    const db = new pg.Client({ connectionString: storeUrl });
    await db.connect();
    await db.query("INSERT INTO engines (name, kind, config, created_at, updated_at) VALUES ('slow', 'openai', $1::jsonb, 1, 1)", [JSON.stringify({ baseUrl: fake.baseUrl, model: 'm', timeoutMs: 120_000, retries: 0 })]);
    await db.query("INSERT INTO conversations (id, client_id, channel, peer, created_at, last_message_at) VALUES ('w1', 'shop', 'web', 'visitor', 1, 1)");
    for (const [i, content] of QUESTIONS.entries()) {
      await db.query(
        "INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at) VALUES ('w1', 'shop', 'website_dialog', $1, 'customer', $2, '{}', $3)",
        [`q${i}`, content, T - 600_000 + i],
      );
    }
    await db.end();
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await fake?.close();
    await server?.stop();
  });

  it('B starting leaves A\'s run running, B shows its progress, refuses a second run, and cancels it within one heartbeat', async () => {
    const a = nodes[0]!;
    const asOwner = (n: RunningPgService) => n.console.accounts.ownerCaller(null);
    const { runId } = await a.console.handlers.startReplay(REQUEST, asOwner(a));
    await secondCall.promise;

    const b = await startNode('node-b', clocks[1]!);
    const refusal = (error: unknown): boolean => error instanceof ConsoleError && error.code === 'replay_running' && error.message === `replay ${runId} is still running: wait for it or cancel it first`;
    // The same refusal on the node running it (in memory) and on the other (the claim in the
    // database). B's start waits for B's start-up sweep first: A's run is live and outlives it.
    await assert.rejects(a.console.handlers.startReplay(REQUEST, asOwner(a)), refusal);
    await assert.rejects(b.console.handlers.startReplay(REQUEST, asOwner(b)), refusal);

    const view = (n: RunningPgService) => n.console.handlers.getReplayRun({ id: runId, changedOnly: false, limit: 10 }, asOwner(n));
    assert.deepEqual([(await view(b)).status, (await view(b)).progress], ['running', { done: 0, total: 3 }], 'as claimed: no heartbeat yet');
    clocks[0]!.advance(REPLAY_HEARTBEAT_MS);
    const seen = await eventually(async () => {
      const run = await view(b);
      return run.progress?.done === 1 && run;
    }, 'node B to show the progress of node A\'s heartbeat', 5000);
    assert.deepEqual([seen.status, seen.progress, seen.error], ['running', { done: 1, total: 3 }, null]);
    assert.deepEqual((await b.console.handlers.listReplayRuns({ limit: 5 }, asOwner(b))).map((r) => [r.id, r.status, r.progress]), [[runId, 'running', { done: 1, total: 3 }]]);

    assert.deepEqual(await b.console.handlers.cancelReplay({ id: runId }, asOwner(b)), { cancelled: true });
    assert.equal((await view(a)).status, 'running', 'asked, not yet seen: node A reads it at its next heartbeat');
    clocks[0]!.advance(REPLAY_HEARTBEAT_MS);
    const ended = await eventually(async () => {
      const run = await view(b);
      return run.status !== 'running' && run;
    }, 'node A to stop its run at its next heartbeat', 5000);
    assert.deepEqual([ended.status, ended.error, ended.progress, ended.rows.map((r) => r.question)], ['cancelled', null, null, [QUESTIONS[0]]], 'ended as a cancel on A ends it: the answered question kept');
    assert.equal(ended.finishedAt, T + 2 * REPLAY_HEARTBEAT_MS, 'stopped at the first heartbeat after the cancel (node A\'s clock)');

    // The installation is free again: node B runs the next replay.
    fake.respond = () => ({ body: { choices: [{ message: { role: 'assistant', content: 'Yes.' } }] } });
    const next = await b.console.handlers.startReplay(REQUEST, asOwner(b));
    assert.ok(next.runId > runId);
    const done = await eventually(async () => {
      const run = await b.console.handlers.getReplayRun({ id: next.runId, changedOnly: false, limit: 10 }, asOwner(b));
      return run.status !== 'running' && run;
    }, 'node B\'s replay to end');
    assert.deepEqual([done.status, done.rows.length], ['done', 3]);
  });

  it('fails a run whose node stopped giving heartbeats when a console reads it, naming the node; a cancel then finds nothing to stop', async () => {
    const b = nodes[1]!;
    const asOwner = b.console.accounts.ownerCaller(null);
    // A node that died mid-run: its last heartbeat one time-out and a millisecond ago on B's clock.
    const db = new pg.Client({ connectionString: storeUrl });
    await db.connect();
    const lastBeat = clocks[1]!.now() - REPLAY_STALE_MS - 1;
    const { rows } = await db.query(
      "INSERT INTO replay_runs (created_at, status, params, node_id, heartbeat_at, progress_done, progress_total) SELECT $1, 'running', params, 'node-gone', $1, 1, 3 FROM replay_runs ORDER BY id LIMIT 1 RETURNING id",
      [lastBeat],
    );
    await db.end();
    const id = Number(rows[0].id);
    const run = await b.console.handlers.getReplayRun({ id, changedOnly: false, limit: 10 }, asOwner);
    assert.deepEqual([run.status, run.error, run.finishedAt, run.progress], ['failed', 'interrupted: the node running it stopped (node-gone: no heartbeat for 60 s)', clocks[1]!.now(), null]);
    assert.deepEqual(await b.console.handlers.cancelReplay({ id }, asOwner), { cancelled: false });
  });

});
