import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from './helpers/postgres.ts';
import { cli } from './helpers/processes.ts';
import { fillCopySource, CHINESE_LINE } from '../src/main/store/pg/copy-source.fixture.ts';
import { copyToPg, CopyMismatchError } from '../src/main/store/pg/copy.ts';
import { migratePg, pgSchemaVersion } from '../src/main/store/pg/migrate.ts';
import { PG_MIGRATIONS } from '../src/main/store/pg/migrations/index.ts';
import { openDatabase } from '../src/main/store/db.ts';
import { createStore } from '../src/main/store/index.ts';
import { migrate } from '../src/main/store/migrate.ts';
import { databasePath, secretKeyPath } from '../src/main/store/data-dir.ts';
import { keyFileBox } from '../src/main/auth/secret-box.ts';

const skip = postgresSkipReason();

/** The tables a copy fills: every SQLite table but FTS5's, its queue and SQLite's own. */
function sqliteCounts(dataDir: string): Map<string, number> {
  const db = new DatabaseSync(databasePath(dataDir), { readOnly: true });
  try {
    const names = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%fts%' AND name NOT LIKE 'sqlite%' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
    return new Map(names.map((t) => [t, Number((db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n)]));
  } finally {
    db.close();
  }
}

describe('store copy: a SQLite installation into PostgreSQL', { skip, timeout: 120_000 }, () => {
  let server: PgServer;
  let databases = 0;
  const open: pg.Client[] = [];
  const dirs: string[] = [];

  /** Indexes a freshly migrated database has: a failed copy must leave each it dropped in place. */
  let indexCount = 0;
  let foreignKeyCount = 0;

  before(async () => {
    server = await startPostgres();
    const { c } = await freshDatabase();
    await migratePg(c);
    indexCount = await indexes(c);
    foreignKeyCount = await foreignKeys(c);
  });
  after(async () => {
    await Promise.all(open.map((c) => c.end().catch(() => undefined)));
    await server?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const dataDir = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'sb-store-copy-'));
    dirs.push(d);
    return d;
  };

  /** A new, empty database on the shared server: its URL and a connection to it. */
  async function freshDatabase(): Promise<{ url: string; c: pg.Client }> {
    const name = `copy_${++databases}`;
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name} TEMPLATE template0`).finally(() => admin.end());
    const url = server.url.replace(/\/postgres$/, `/${name}`);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    open.push(c);
    return { url, c };
  }

  const indexes = async (c: pg.Client): Promise<number> => Number((await c.query("SELECT count(*) AS n FROM pg_indexes WHERE schemaname = 'public'")).rows[0].n);
  const foreignKeys = async (c: pg.Client): Promise<number> => Number((await c.query("SELECT count(*) AS n FROM pg_constraint WHERE contype = 'f'")).rows[0].n);
  const pgCount = async (c: pg.Client, table: string): Promise<number> => Number((await c.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);

  /** Every application table empty, as migrations leave them (request_log_rows at 0). */
  async function assertUntouched(c: pg.Client): Promise<void> {
    const tables = (await c.query<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' AND tablename NOT IN ('schema_migrations', 'kb_version', 'request_log_rows')")).rows.map((r) => r.t);
    assert.ok(tables.length > 20, 'the schema is there');
    for (const t of tables) assert.equal(await pgCount(c, t), 0, `${t} is empty`);
    assert.deepEqual((await c.query('SELECT verified, n::int AS n FROM request_log_rows ORDER BY verified')).rows, [{ verified: 0, n: 0 }, { verified: 1, n: 0 }]);
    assert.equal((await c.query("SELECT count(*)::int AS n FROM pg_trigger WHERE NOT tgisinternal AND tgenabled = 'D'")).rows[0].n, 0, 'no trigger left disabled');
    assert.equal(await indexes(c), indexCount, 'every index in place');
    assert.equal(await foreignKeys(c), foreignKeyCount, 'every foreign key in place');
  }

  it('copies every table of a filled store through the CLI, checks it, and the copy serves search, inserts and rollups', async () => {
    const dir = dataDir();
    fillCopySource(dir);
    const expected = sqliteCounts(dir);
    const { url, c } = await freshDatabase();

    const run = cli(dir, 'store', 'copy', '--to', url);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^copied .*switchboard\.db \(SQLite schema 34\) into postgres:\/\/postgres@127\.0\.0\.1:\d+\/copy_\d+ \(PostgreSQL schema \d+; migrations applied: 1, 2, 3, 4/);
    assert.match(run.stdout, /^ {2}messages +60 +\d+$/m);
    assert.match(run.stdout, /^verified: row counts of 26 tables equal, \d+ sampled rows equal column by column/m);
    assert.match(run.stdout, /not copied \(SQLite only\): kb_fts, messages_fts, messages_fts_queue/);
    assert.match(run.stdout, /copied sealed: every node using this database needs this data folder's key/);

    for (const [table, n] of expected) {
      assert.ok(n > 0, `the fixture fills ${table}`);
      assert.equal(await pgCount(c, table), n, table);
    }

    // Chinese text is found through the trigram index (sequential scans priced out, as migrate.test does).
    await c.query('BEGIN');
    await c.query('SET LOCAL enable_seqscan = off');
    const sql = "SELECT msg_id FROM messages WHERE content LIKE '%' || $1 || '%'";
    const plan = JSON.stringify((await c.query(`EXPLAIN (FORMAT JSON) ${sql}`, ['申请退款'])).rows[0]);
    const found = (await c.query(sql, ['申请退款'])).rows.map((r) => r.msg_id);
    await c.query('COMMIT');
    assert.ok(plan.includes('messages_content_trgm'), plan);
    assert.deepEqual(found, ['m5']);
    assert.equal((await c.query("SELECT content FROM messages WHERE msg_id = 'm5'")).rows[0].content, CHINESE_LINE);

    // The sealed secrets came as they were, and open with the data folder's key.
    const sealed = (await c.query("SELECT sealed FROM client_secrets WHERE retired_at IS NULL AND client_id = 'acme'")).rows[0].sealed;
    assert.equal(keyFileBox(secretKeyPath(dir)).open(sealed), 't'.repeat(40));

    // The rollups are SQLite's, retention's deleted rows still counted (a rebuild would count only the rows left).
    const lite = new DatabaseSync(databasePath(dir), { readOnly: true });
    const liteRequests = Number((lite.prepare("SELECT sum(n) AS n FROM stats_minutes WHERE metric = 'requests'").get() as { n: number }).n);
    const liteVerified = Number((lite.prepare('SELECT n FROM request_log_rows WHERE verified = 1').get() as { n: number }).n);
    lite.close();
    const pgRequests = async (): Promise<number> => Number((await c.query("SELECT sum(n) AS n FROM stats_minutes_all WHERE metric = 'requests'")).rows[0].n);
    const logged = Number((await c.query('SELECT sum(count) AS n FROM request_log')).rows[0].n);
    assert.equal(await pgRequests(), liteRequests);
    assert.ok(liteRequests > logged, `minutes count ${liteRequests} requests, the log keeps ${logged}`);

    // Plain inserts after the copy: identities continue past the largest id, the triggers count again.
    const maxId = Number((await c.query('SELECT max(id) AS n FROM messages')).rows[0].n);
    const inserted = await c.query("INSERT INTO messages (conversation_id, client_id, event_type, msg_id, role, content, message_info, received_at) VALUES ('v-im-1', 'acme', 'auto_dialog', 'after', 'customer', 'x', '{}', 1) RETURNING id");
    assert.equal(Number(inserted.rows[0].id), maxId + 1);
    for (const table of ['audit', 'request_log', 'replies', 'deliveries', 'kb_entries']) {
      const top = Number((await c.query(`SELECT max(id) AS n FROM ${table}`)).rows[0].n);
      const next = Number((await c.query(`SELECT nextval(pg_get_serial_sequence('${table}', 'id')) AS n`)).rows[0].n);
      assert.equal(next, top + 1, table);
    }
    const before = await pgRequests();
    await c.query("INSERT INTO request_log (at, request_id, method, path, status, latency_ms, verified) VALUES (1700000000000, 'new', 'POST', '/v1/messages', 200, 1, 1)");
    assert.equal(await pgRequests(), before + 1, 'stats_request_log_insert fires again');
    assert.equal(Number((await c.query('SELECT n FROM request_log_rows_all WHERE verified = 1')).rows[0].n), liteVerified + 1, 'request_log_rows counts again');

    // A second copy into the same database is refused with one line, and writes nothing.
    const again = cli(dir, 'store', 'copy', '--to', url);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /^error: the target database already holds data \(in .*messages.*\): store copy writes only into an empty database; nothing was written\n$/);
    assert.equal(await pgCount(c, 'messages'), 61);
  });

  it('leaves the target as it was when a row cannot go in midway, naming table, key and column', async () => {
    const dir = dataDir();
    fillCopySource(dir);
    const store = createStore(openDatabase(databasePath(dir)));
    // SQLite's text holds U+0000, PostgreSQL's cannot: the last message stops the copy after every earlier table and batch went in.
    const bad = store.messages.insert({ conversationId: 'v-im-1', clientId: 'acme', eventType: 'auto_dialog', msgId: 'nul', role: 'customer', fromUserId: null, fromUserType: null, content: 'a\u0000b', messageInfo: '{}', createTimestamp: null, receivedAt: 1, replyScheduled: null, replyReason: null });
    store.close();
    const { url, c } = await freshDatabase();
    const source = new DatabaseSync(databasePath(dir), { readOnly: true });
    const progress: string[] = [];
    await assert.rejects(copyToPg(source, c, { batchRows: 7, progressFrom: 0, onProgress: (l) => progress.push(l) }), new RegExp(`messages \\(id=${bad}\\) column content: text with a NUL character`));
    assert.ok(progress.some((l) => l.startsWith('store copy: messages 7 of 61 rows')), progress.join('\n'));
    await assertUntouched(c);

    // A connection killed midway (the server ends it): the same.
    const target = new pg.Client({ connectionString: url });
    await target.connect();
    target.on('error', () => undefined);
    const pid = (await target.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    // A row whose parent is gone (SQLite enforces foreign keys per connection; one written with
    // them off): the foreign key made again after the rows finds it.
    const fixed = new DatabaseSync(databasePath(dir));
    fixed.exec('PRAGMA foreign_keys = OFF');
    fixed.prepare("UPDATE messages SET conversation_id = 'gone' WHERE id = ?").run(bad);
    fixed.prepare("UPDATE messages SET content = 'fine' WHERE id = ?").run(bad);
    await assert.rejects(copyToPg(source, c), /insert or update on table "messages" violates foreign key constraint "messages_conversation_id_fkey"/);
    await assertUntouched(c);
    fixed.prepare('DELETE FROM messages WHERE id = ?').run(bad);
    fixed.close();
    let killed = false;
    const kill = async (line: string): Promise<void> => {
      if (killed || !line.includes('replies')) return;
      killed = true;
      await c.query('SELECT pg_terminate_backend($1)', [pid]);
    };
    await assert.rejects(copyToPg(source, target, { batchRows: 5, progressFrom: 0, onProgress: (l) => void kill(l) }), /terminat|Connection terminated|closed|connection error/i);
    assert.ok(killed);
    source.close();
    await assertUntouched(c);
  });

  it('rolls back when the check finds a difference, and names table, key and column', async () => {
    const dir = dataDir();
    fillCopySource(dir);
    const { c } = await freshDatabase();
    const source = new DatabaseSync(databasePath(dir), { readOnly: true });
    const copying = copyToPg(source, c, { beforeVerify: async (t) => void (await t.query("UPDATE messages SET content = 'changed' WHERE msg_id = 'm5'")) });
    const error = await copying.then(() => null, (e: unknown) => e);
    source.close();
    assert.ok(error instanceof CopyMismatchError, String(error));
    assert.deepEqual(error.mismatches, [`messages (id=6) column content: SQLite "${CHINESE_LINE}", PostgreSQL "changed"`]);
    await assertUntouched(c);
  });

  it('migrates an older SQLite store first, and refuses bad URLs, unreachable servers, missing folders and foreign databases', async () => {
    const dir = dataDir();
    const old = new DatabaseSync(databasePath(dir));
    migrate(old, undefined, 30);
    old.exec("INSERT INTO clients (id, created_at, updated_at) VALUES ('c1', 1, 1)");
    old.close();
    const { url, c } = await freshDatabase();
    const run = cli(dir, 'store', 'copy', '--to', url);
    assert.equal(run.status, 0, run.stderr);
    const lite = new DatabaseSync(databasePath(dir), { readOnly: true });
    assert.equal((lite.prepare('PRAGMA user_version').get() as { user_version: number }).user_version, 34);
    lite.close();
    assert.equal(await pgCount(c, 'clients'), 1);

    const oneLine = (args: string[], status: number, message: RegExp): void => {
      const r = cli(dir, 'store', 'copy', ...args);
      assert.equal(r.status, status, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr.split('\n')[0]!, message);
    };
    oneLine([], 2, /^error: store copy needs --to postgres:\/\//);
    oneLine(['--to', 'not a url'], 2, /^error: --to is not a URL/);
    oneLine(['--to', 'mysql://h/db'], 2, /^error: --to must be a postgres:\/\/ or postgresql:\/\/ URL, got mysql:/);
    oneLine(['--to', 'postgres://127.0.0.1:1/db'], 1, /^error: cannot connect to PostgreSQL at postgres:\/\/127\.0\.0\.1:1\/db: connection refused/);
    oneLine(['--to', 'postgres://u:hunter2@127.0.0.1:1/db'], 1, /^error: cannot connect to PostgreSQL at postgres:\/\/u@127\.0\.0\.1:1\/db/);
    const missing = cli(join(dir, 'nope'), 'store', 'copy', '--to', url);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /^error: no data folder at .*nope: give the installation's folder with --data-dir\n/);

    const foreign = await freshDatabase();
    await foreign.c.query('CREATE TABLE theirs (x int)');
    const refused = cli(dir, 'store', 'copy', '--to', foreign.url);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /^error: the target database is not empty \(tables theirs\) and not a Switchboard database/);
    assert.equal((await foreign.c.query("SELECT to_regclass('clients') AS t")).rows[0].t, null, 'nothing created in it');

    // One of ours at an older version, holding data: refused before its migrations run.
    const older = await freshDatabase();
    await migratePg(older.c, PG_MIGRATIONS, { target: 2 });
    await older.c.query("INSERT INTO clients (id, created_at, updated_at) VALUES ('x', 1, 1)");
    const held = cli(dir, 'store', 'copy', '--to', older.url);
    assert.equal(held.status, 1);
    assert.match(held.stderr, /^error: the target database already holds data \(in clients\)/);
    assert.equal(await pgSchemaVersion(older.c), 2, 'left unmigrated');
  });
});
