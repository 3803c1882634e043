import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from './helpers/postgres.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import { createInstallationDatabase, post, spawnPgNode, type PgNode } from './helpers/pg-node.ts';
import { cliHereArgs } from './helpers/cli-here.ts';
import { secretFrom, type CliResult } from './helpers/processes.ts';
import { keyFileBox } from '../src/main/auth/secret-box.ts';
import { startFakeOpenAi } from './helpers/fake-openai.ts';

const ROOT = new URL('..', import.meta.url).pathname;

/** `npm run cli -- ARGS` as a real process: it exits only once its PostgreSQL pool is closed. */
function cliProcess(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['src/main/cli/index.ts', ...args], { cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the CLI did not exit within 20 s (a pool left open?): ${stderr}`));
    }, 20_000);
    child.on('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

let sent = 0;
const message = () => ({ event_type: 'auto_dialog', msg_id: `cli-${++sent}`, from_user_id: 'customer-1', to_user_id: 'shop-bot', content: 'hello', message_type: 1, from_user_type: 2 });

/** Posts signed messages until the node answers `status`; returns how long that took. Polled: the node's mirror announces nothing. */
async function untilStatus(node: PgNode, secret: string, status: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const r = await post(node.endpoint, 'shop', secret, message());
    if (r.status === status) return Date.now() - started;
    if (Date.now() - started > 5000) throw new Error(`still ${r.status} (${JSON.stringify(r.json)}) after 5 s, waiting for ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Resolves once the CLI's connections are gone from the server: runCli closed its pool before it returned. */
async function noCliConnectionLeft(url: string): Promise<void> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const started = Date.now();
    for (;;) {
      const { rows } = await db.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'switchboard cli'");
      if ((rows[0] as { n: number }).n === 0) return;
      // A closed connection's server process ends a moment later; an open pool's stays for its idle time-out (10 s).
      if (Date.now() - started > 2000) throw new Error(`the CLI left ${(rows[0] as { n: number }).n} connection(s) open`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await db.end();
  }
}

type Reply = { content: string; handoff: boolean } | undefined;

/** Posts website questions as `client` until `done` accepts the reply; returns how long that took. Polled, as untilStatus. */
async function untilReply(node: PgNode, client: string, secret: string, done: (reply: Reply) => boolean): Promise<number> {
  const started = Date.now();
  for (;;) {
    const r = await post(node.endpoint, client, secret, { event_type: 'website_dialog', msg_id: `ask-${++sent}`, from_user_id: 'visitor', to_user_id: client, content: 'hello there', message_type: 1 });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    if (done(r.json['reply'] as Reply)) return Date.now() - started;
    if (Date.now() - started > 5000) throw new Error(`still ${JSON.stringify(r.json)} after 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * An operator on PostgreSQL manages clients with the CLI (issue 30): what `clients` writes, every
 * node serves within about a second, through its configuration mirror.
 */
describe('clients from the CLI on a PostgreSQL installation', { skip: postgresSkipReason(), timeout: 120_000 }, () => {
  let server: PgServer;
  let receiver: Receiver;
  let node: PgNode | undefined;
  let storeUrl = '';
  const dir = mkdtempSync(join(tmpdir(), 'sb-pg-cli-'));
  const keyFile = join(dir, 'shared.key');
  // The operator's machine: a data folder of its own, the nodes' key file.
  const cli = (args: string[]) => [...args, '--data-dir', join(dir, 'operator'), '--secret-key-file', keyFile, '--store', storeUrl];

  before(async () => {
    server = await startPostgres();
    storeUrl = await createInstallationDatabase(server.url);
    keyFileBox(keyFile).seal('make the key file');
    receiver = await startReceiver();
  });
  after(async () => {
    await node?.stop();
    await receiver?.close();
    await server?.stop();
  });

  it('a client added, disabled, enabled and rotated with --store is served so by a node within a second or two', async () => {
    const added = await cliProcess(cli(['clients', 'add', 'shop', '--send-url', receiver.url, '--quiet-seconds', '0.2']));
    assert.equal(added.status, 0, added.stderr);
    assert.match(added.stderr, /^PostgreSQL: applied migrations 1, /, 'the CLI migrated the empty database first');
    assert.match(added.stdout, /^client shop added$/m);
    const secret = secretFrom(added.stdout);

    node = await spawnPgNode(join(dir, 'node'), storeUrl, keyFile);
    const first = await post(node.endpoint, 'shop', secret, message());
    assert.equal(first.status, 200, JSON.stringify(first.json));

    const disabled = await cliHereArgs(cli(['clients', 'disable', 'shop']));
    assert.deepEqual([disabled.status, disabled.stdout], [0, 'client shop disabled\n'], disabled.stderr);
    await noCliConnectionLeft(storeUrl);
    const refusedAfter = await untilStatus(node, secret, 403);
    const refused = await post(node.endpoint, 'shop', secret, message());
    assert.equal(refused.json['code'], 'client_disabled');

    assert.equal((await cliHereArgs(cli(['clients', 'enable', 'shop']))).status, 0);
    await untilStatus(node, secret, 200);

    const rotated = await cliHereArgs(cli(['clients', 'rotate', 'shop', '--retire-previous']));
    assert.equal(rotated.status, 0, rotated.stderr);
    const fresh = secretFrom(rotated.stdout);
    await untilStatus(node, fresh, 200);
    await untilStatus(node, secret, 401);

    const list = await cliHereArgs(cli(['clients', 'list']));
    assert.match(list.stdout, /^shop\s+enabled\s+1\s+http:\/\/127\.0\.0\.1:\d+\/hook\s/m);
    assert.ok(refusedAfter < 3000, `refused after ${refusedAfter} ms`);
  });

  it('a knowledge base imported with --store answers on a node within a second or two; a bad file imports nothing', async () => {
    const added = await cliHereArgs(cli(['clients', 'add', 'site']));
    const secret = secretFrom(added.stdout);
    node ??= await spawnPgNode(join(dir, 'node'), storeUrl, keyFile);
    const file = join(dir, 'kb.json');
    writeFileSync(file, JSON.stringify([{ question: 'Where is my parcel?', answer: 'Track it under Orders.', phrasings: ['track my order'] }, { question: 'Do you ship abroad?', answer: 'Yes, to 30 countries.' }]));
    const imported = await cliHereArgs(cli(['kb', 'import', file]));
    assert.deepEqual([imported.status, imported.stdout], [0, `imported 2 entries from ${file}\n`], imported.stderr);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify([{ question: 'Fine?', answer: 'Yes.' }, { question: '', answer: 'no question' }]));
    const refused = await cliHereArgs(cli(['kb', 'import', bad]));
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /^error: import refused, nothing was imported/);
    const list = await cliHereArgs(cli(['kb', 'list']));
    assert.match(list.stdout, /^\d+\tWhere is my parcel\?\tTrack it under Orders\.\n\d+\tDo you ship abroad\?\tYes, to 30 countries\.\n$/);
    const ask = () => post(node!.endpoint, 'site', secret, { event_type: 'website_dialog', msg_id: `kb-${++sent}`, from_user_id: 'visitor', to_user_id: 'site', content: 'how do I track my order', message_type: 1 });
    const started = Date.now();
    for (;;) {
      const r = await ask();
      assert.equal(r.status, 200, JSON.stringify(r.json));
      if ((r.json['reply'] as { content: string }).content === 'Track it under Orders.') break;
      if (Date.now() - started > 5000) throw new Error(`no answer from the imported entry after 5 s: ${JSON.stringify(r.json)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  it('an engine added with --store answers on a node with its sealed key; removed, the node hands questions to a human', async () => {
    const fake = await startFakeOpenAi();
    try {
      const added = await cliHereArgs(cli(['engines', 'add', 'gpt', '--base-url', fake.baseUrl, '--model', 'llama3.1:8b', '--api-key-env', 'LLM_KEY']), { env: { LLM_KEY: 'sk-for-the-nodes-0123456789' } });
      assert.equal(added.status, 0, added.stderr);
      assert.match(added.stdout, /^engine gpt added: llama3\.1:8b at http:\/\/127\.0\.0\.1:\d+\/v1 \(API key stored encrypted\)$/m);
      const client = await cliHereArgs(cli(['clients', 'add', 'bot', '--engine', 'gpt']));
      assert.equal(client.status, 0, client.stderr);
      const secret = secretFrom(client.stdout);
      node ??= await spawnPgNode(join(dir, 'node'), storeUrl, keyFile);
      await untilReply(node, 'bot', secret, (reply) => reply?.content === 'Hello from the model.' && !reply.handoff);
      assert.equal(fake.calls.at(-1)!.headers.authorization, 'Bearer sk-for-the-nodes-0123456789', 'the node opened the key the CLI sealed');
      const removed = await cliHereArgs(cli(['engines', 'remove', 'gpt']));
      assert.equal(removed.status, 0, removed.stderr);
      const handedOver = await untilReply(node, 'bot', secret, (reply) => reply?.handoff === true);
      assert.ok(handedOver < 3000, `still answered by the removed engine ${handedOver} ms later`);
      const calls = fake.calls.length;
      await untilReply(node, 'bot', secret, (reply) => reply?.handoff === true);
      assert.equal(fake.calls.length, calls, 'no question reaches the removed engine');
    } finally {
      await fake.close();
    }
  });
});
