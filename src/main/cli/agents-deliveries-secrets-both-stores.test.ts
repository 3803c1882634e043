import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from '../../../test/helpers/postgres.ts';
import { copyDatabase, createTemplate } from '../../../test/helpers/pg-work-fixture.ts';
import { cliHereArgs } from '../../../test/helpers/cli-here.ts';
import { spawnPgNode } from '../../../test/helpers/pg-node.ts';
import { newKeyCommand } from './secrets-commands.ts';
import type { CliResult } from '../../../test/helpers/processes.ts';
import { keyFileBox, openKeyring } from '../auth/secret-box.ts';
import { openPgPool } from '../store/pg/pool.ts';
import { pgConsoleTokenQueries } from '../store/pg/console-token-queries.ts';
import { sharedConsoleTokenAtStart } from '../console-api/console-token.ts';
import { createStore } from '../store/index.ts';
import { openDatabase } from '../store/db.ts';
import { databasePath } from '../store/data-dir.ts';
import type { StoreContract } from '../store/contract.ts';
import { pgStore } from '../store/pg/pg-store.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5);
const ORIGIN = 'https://console.example.com';

/** The same commands on two stores, with the parts that differ by nature (generated links, the folders' paths) made equal. */
function normal(r: CliResult, dir: string): CliResult {
  const clean = (t: string) => t.replaceAll(dir, '<dir>').replace(/#[A-Za-z0-9_=-]+/g, '#<link>');
  return { status: r.status, stdout: clean(r.stdout), stderr: clean(r.stderr) };
}

/** A reply and its delivery in a fresh conversation; `dead`: tried 3 times, last answered 503. */
async function seedDelivery(store: StoreContract, conversationId: string, dead: boolean): Promise<number> {
  if (!(await store.clients.get('shop'))) await store.clients.create('shop', DEFAULT_CLIENT_SETTINGS, 0);
  await store.conversations.create({ id: conversationId, clientId: 'shop', channel: 'im', peer: conversationId, groupId: null, customerId: null, autoReply: 'active', now: 0 });
  const msgId = `reply-${conversationId}`;
  const replyId = await store.messages.insertReply({ conversationId, kind: 'auto', msgId, replyTo: [], afterMessageId: 0, content: '您好', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: 0 });
  const id = await store.deliveries.insert({ replyId, replyMsgId: msgId, conversationId, clientId: 'shop', sendUrl: 'http://127.0.0.1:9/hook', messageInfo: '{}', state: 'pending', nextAttemptAt: T0, createdAt: T0 });
  if (dead) {
    for (let attempt = 1; attempt <= 3; attempt++) {
      const last = attempt === 3;
      await store.deliveries.recordAttempt({ deliveryId: id, attempt, startedAt: T0 + attempt * 1000, durationMs: 12.5, status: 503, error: 'HTTP 503', outcome: last ? 'dead' : 'retry', state: last ? 'dead' : 'pending', nextAttemptAt: T0 + attempt * 2000, now: T0 + attempt * 1000 });
    }
  }
  return id;
}

describe('agents, deliveries and secrets on SQLite and on PostgreSQL', { skip: postgresSkipReason() }, () => {
  let server: PgServer;
  let databases = 0;
  before(async () => {
    server = await startPostgres();
    await createTemplate(server.url, 'groups_template');
  });
  after(async () => {
    await server?.stop();
  });

  /** Two folders (SQLite's, and the PostgreSQL run's config and key) each with a copy of one key file, and a fresh database. */
  async function stores(): Promise<{ sqliteDir: string; pgDir: string; url: string }> {
    const sqliteDir = mkdtempSync(join(tmpdir(), 'sb-groups-'));
    const pgDir = mkdtempSync(join(tmpdir(), 'sb-groups-'));
    keyFileBox(join(sqliteDir, 'node.key')).seal('make the key file');
    copyFileSync(join(sqliteDir, 'node.key'), join(pgDir, 'node.key'));
    const url = await copyDatabase(server.url, 'groups_template', `groups_${++databases}`);
    return { sqliteDir, pgDir, url };
  }

  /** Runs each command on both stores at the same clock and asserts the same output; returns PostgreSQL's. */
  async function bothSay(sequence: string[][], s: { sqliteDir: string; pgDir: string; url: string }, stdin = ''): Promise<CliResult[]> {
    let now = T0;
    const results: CliResult[] = [];
    for (const args of sequence) {
      now += 60_000;
      const on = async (dir: string, extra: string[]) => normal(await cliHereArgs([...args, '--data-dir', dir, '--secret-key-file', join(dir, 'node.key'), ...extra], { nowMs: () => now, input: stdin }), dir);
      const onSqlite = await on(s.sqliteDir, []);
      const onPostgres = await on(s.pgDir, ['--store', s.url]);
      assert.deepEqual(onPostgres, onSqlite, args.join(' '));
      results.push(onPostgres);
    }
    return results;
  }

  it('agents: the same output for the same commands, mistakes included; PostgreSQL keeps the audit rows, marked via cli', async () => {
    const s = await stores();
    const o = ['--origin', ORIGIN];
    const out = await bothSay(
      [
        ['agents', 'list'],
        ['agents', 'add', 'ann', '--name', 'Ann Lee', ...o],
        ['agents', 'add', 'bob', '--name', 'Bob', '--role', 'admin', '--capacity', '3', ...o],
        ['agents', 'list'],
        ['agents', 'disable', 'ann'],
        ['agents', 'disable', 'ann'],
        ['agents', 'enable', 'ann'],
        ['agents', 'reset', 'bob', ...o],
        ['agents', 'remove', 'bob'],
        ['agents', 'list'],
        ['agents', 'add', 'ann', '--name', 'Again', ...o],
        ['agents', 'remove', 'ghost'],
        ['agents', 'add', 'bad id!', '--name', 'X'],
        ['agents', 'add', 'cy', '--name', 'Cy', '--role', 'boss'],
        ['agents', 'frobnicate'],
      ],
      s,
    );
    assert.match(out[1]!.stdout, /^agent ann \(Ann Lee, agent, capacity \d+\) added\nsign-in link: https:\/\/console\.example\.com\/#<link>\n/);
    assert.equal(out[6]!.stdout, 'agent ann enabled (no password yet: "agents reset" makes a new link)\n');
    assert.match(out[9]!.stdout, /^ID\s+NAME\s+ROLE.*\nann\s+Ann Lee\s+agent\s+\d+\s+invited\s+-\s+0\n$/);
    assert.equal(out[11]!.status, 2);
    const db = new pg.Client({ connectionString: s.url });
    await db.connect();
    const audit = (await db.query("SELECT detail FROM audit WHERE action = 'agent' ORDER BY id")).rows as Array<{ detail: string }>;
    await db.end();
    assert.ok(audit.length >= 5 && audit.every((a) => (JSON.parse(a.detail) as { via: string }).via === 'cli'), JSON.stringify(audit));
  });

  it('console rotate-token: the same lines on both stores; on PostgreSQL every node derives the new token from the stored salt', async () => {
    const s = await stores();
    const on = async (dir: string, extra: string[]) => cliHereArgs(['console', 'rotate-token', '--data-dir', dir, '--secret-key-file', join(dir, 'node.key'), ...extra]);
    const [sqlite, postgres] = [await on(s.sqliteDir, []), await on(s.pgDir, ['--store', s.url])];
    const masked = (r: CliResult) => ({ ...r, stdout: r.stdout.replace(/#token=[\w-]+/g, '#token=<token>') });
    assert.deepEqual(masked(postgres), masked(sqlite));
    assert.equal(postgres.status, 0);
    const printed = /#token=([\w-]+)/.exec(postgres.stdout)![1]!;
    const pool = openPgPool(s.url, { max: 1, onIdleError: () => {} });
    try {
      const settings = { ...pgStore(pool).settings, putIfAbsent: pgConsoleTokenQueries(pool).putIfAbsent };
      const atStart = await sharedConsoleTokenAtStart(settings, openKeyring({ kind: 'file', path: join(s.pgDir, 'node.key'), label: 'k', createIfMissing: false }));
      assert.equal(atStart.token, printed, 'a node started now prints the rotated token');
    } finally {
      await pool.end();
    }
  });

  it('deliveries: list, show and retry print the same; a retried dead delivery is pending again on PostgreSQL', async () => {
    const s = await stores();
    const sqlite = createStore(openDatabase(databasePath(s.sqliteDir)));
    const pool = new pg.Pool({ connectionString: s.url, max: 2 });
    try {
      for (const store of [sqlite, pgStore(pool)] as StoreContract[]) {
        assert.equal(await seedDelivery(store, 'c1', false), 1);
        assert.equal(await seedDelivery(store, 'c2', true), 2);
      }
    } finally {
      sqlite.close();
    }
    try {
      const out = await bothSay(
        [
          ['deliveries', 'list'],
          ['deliveries', 'list', '--state', 'dead'],
          ['deliveries', 'list', '--state', 'sent'],
          ['deliveries', 'show', '2'],
          ['deliveries', 'retry', '1'],
          ['deliveries', 'retry', '2'],
          ['deliveries', 'retry', '2'],
          ['deliveries', 'show', '2'],
          ['deliveries', 'show', '99'],
          ['deliveries', 'list', '--state', 'lost'],
          ['deliveries', 'list', '--limit', '0'],
          ['deliveries', 'retry'],
        ],
        s,
      );
      assert.match(out[1]!.stdout, /^ID\s+STATE\s+ATTEMPTS.*\n2\s+dead\s+3\s+HTTP 503\s+-\s+reply-c2\s+http:\/\/127\.0\.0\.1:9\/hook\n$/);
      assert.match(out[3]!.stdout, /^delivery 2: dead, 3 attempt\(s\), reply reply-c2 in conversation c2\n[^]*\n3\s+2025-01-02T03:04:08Z\s+12\.5\s+503\s+dead\s+HTTP 503\n$/);
      assert.equal(out[5]!.stdout, 'delivery 2 queued again with a fresh retry schedule; a running server sends it within a second\n');
      assert.equal(out[6]!.stderr.split('\n')[0], 'error: delivery 2 is pending; only dead deliveries can be retried');
      const row = (await pool.query('SELECT state, next_attempt_at FROM deliveries WHERE id = 2')).rows[0] as { state: string; next_attempt_at: string };
      assert.deepEqual({ state: row.state, at: Number(row.next_attempt_at) }, { state: 'pending', at: T0 + 6 * 60_000 });
    } finally {
      await pool.end();
    }
  });

  it('secrets: check, reseal and rotate-key print the same; on PostgreSQL every value moves to the new key, a node with the old key refuses to start, and a re-seal that fails changes nothing', async () => {
    const s = await stores();
    const nextKey = join(s.sqliteDir, 'next.key');
    newKeyCommand([nextKey]);
    const oldKey = readFileSync(join(s.pgDir, 'node.key'), 'utf8');
    const out = await bothSay(
      [
        ['secrets', 'check'],
        ['clients', 'add', 'shop', '--secret', 'a-chosen-secret-of-forty-characters-0001'],
        ['clients', 'add', 'desk', '--secret', 'a-chosen-secret-of-forty-characters-0002'],
        ['engines', 'add', 'gpt', '--model', 'm', '--base-url', 'http://127.0.0.1:9/v1', '--api-key-stdin'],
        ['secrets', 'check'],
        ['secrets', 'reseal'],
        ['secrets', 'rotate-key', '--new-key-file', nextKey],
        ['secrets', 'check'],
        ['secrets', 'rotate-key', '--new-key-file', nextKey],
        ['secrets', 'check', 'extra'],
      ],
      s,
      'sk-engine-key-1234',
    );
    const next = keyFileBox(nextKey);
    assert.match(out[6]!.stdout, new RegExp(`^re-sealed 3 values: key [0-9a-f]{8} → ${next.keyId()}\nthe new key is in <dir>/node\\.key; the old one stays in <dir>/node\\.key\\.old`));
    assert.match(out[6]!.stdout, /\na node started with only the old key [0-9a-f]{8} refuses to start \(none of the stored values opens with it\)\n$/);
    assert.match(out[7]!.stdout, /^all 3 values open with this node's keys$/m);
    assert.equal(out[8]!.status, 1);

    const db = new pg.Client({ connectionString: s.url });
    await db.connect();
    try {
      const sealed = async () => [
        ...((await db.query('SELECT sealed FROM client_secrets ORDER BY id')).rows as Array<{ sealed: string }>).map((r) => r.sealed),
        ...((await db.query('SELECT api_key_sealed AS sealed FROM engines ORDER BY name')).rows as Array<{ sealed: string }>).map((r) => r.sealed),
      ];
      const now = await sealed();
      assert.deepEqual(now.map((v) => next.open(v)), ['a-chosen-secret-of-forty-characters-0001', 'a-chosen-secret-of-forty-characters-0002', 'sk-engine-key-1234']);
      assert.ok(now.every((v) => v.startsWith(`keyfile:v2:${next.keyId()}:`)), now.join('\n'));

      // A node given only the old key: its start-up check names the problem and it exits.
      const oldOnly = join(mkdtempSync(join(tmpdir(), 'sb-groups-old-')), 'node.key');
      writeFileSync(oldOnly, oldKey, { mode: 0o600 });
      await assert.rejects(spawnPgNode(mkdtempSync(join(tmpdir(), 'sb-groups-node-')), s.url, oldOnly), new RegExp(`none of the 3 stored client secrets and engine keys opens with this node's key \\(client \\w+ secret …000\\d: secret sealed with key ${next.keyId()}, this node has key`));

      // One transaction: shop's secret back under the previous key, and an engine key no key here opens, last.
      const previous = keyFileBox(join(s.pgDir, 'node.key.old'));
      await db.query("UPDATE client_secrets SET sealed = $1 WHERE client_id = 'shop'", [previous.seal('a-chosen-secret-of-forty-characters-0001')]);
      const stranger = keyFileBox(join(mkdtempSync(join(tmpdir(), 'sb-groups-x-')), 'x.key'));
      await db.query("INSERT INTO engines (name, kind, config, api_key_sealed, created_at, updated_at) SELECT 'zz', kind, config, $1, 0, 0 FROM engines WHERE name = 'gpt'", [stranger.seal('lost')]);
      const before = await sealed();
      const refused = await cliHereArgs(['secrets', 'reseal', '--data-dir', s.pgDir, '--secret-key-file', join(s.pgDir, 'node.key'), '--store', s.url]);
      assert.equal(refused.status, 1);
      assert.match(refused.stderr, /^error: engine zz API key does not open with this node's keys, so nothing was re-sealed/);
      assert.deepEqual(await sealed(), before, 'shop\'s secret, re-sealed before zz failed, rolled back with it');
    } finally {
      await db.end();
    }
  });
});
