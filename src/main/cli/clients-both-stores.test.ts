import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from '../../../test/helpers/postgres.ts';
import { copyDatabase, urlOf } from '../../../test/helpers/pg-work-fixture.ts';
import { cliHereArgs } from '../../../test/helpers/cli-here.ts';
import type { CliResult } from '../../../test/helpers/processes.ts';
import { keyFileBox } from '../auth/secret-box.ts';
import { pgClientAdminStore } from '../store/pg/client-queries.ts';
import { migratePg } from '../store/pg/migrate.ts';
import { PG_MIGRATIONS } from '../store/pg/migrations/index.ts';
import { createStore } from '../store/index.ts';
import { openDatabase } from '../store/db.ts';
import { databasePath } from '../store/data-dir.ts';
import { engineConfigSchema } from '../../shared/engine-config.ts';

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5);
const GIVEN = (n: number) => `a-chosen-secret-of-forty-characters-000${n}`;

/** The same clients commands, in order, with what each must do; `secret: …` lines differ by nature (generated). */
const SEQUENCE: string[][] = [
  ['clients', 'list'],
  ['clients', 'add', 'shop', '--send-url', 'https://hooks.example.com/in', '--bound-account', 'bot-1', '--group-policy', 'all', '--secret', GIVEN(1)],
  ['clients', 'add', 'beta', '--engine', 'gpt', '--quiet-seconds', '0.5'],
  ['clients', 'add', 'Zed', '--bot-ids', 'b1, b2', '--secret', GIVEN(2)],
  ['clients', 'list'],
  ['clients', 'set', 'shop', '--quiet-seconds', '1.5', '--engine', 'gpt', '--fallback-text', 'One moment please'],
  ['clients', 'show', 'shop'],
  ['clients', 'disable', 'shop'],
  ['clients', 'list'],
  ['clients', 'enable', 'shop'],
  ['clients', 'rotate', 'shop', '--secret', GIVEN(3)],
  ['clients', 'list'],
  ['clients', 'rotate', 'shop', '--secret', GIVEN(4)],
  ['clients', 'show', 'shop'],
  ['clients', 'rotate', 'shop', '--retire-previous', '--secret', GIVEN(5)],
  ['clients', 'show', 'shop'],
  ['clients', 'rotate', 'beta', '--retire-previous'],
  ['clients', 'list'],
  // The operator's mistakes: the same messages and exit statuses.
  ['clients', 'rotate', 'ghost'],
  ['clients', 'disable', 'ghost'],
  ['clients', 'enable', 'ghost'],
  ['clients', 'set', 'ghost', '--quiet-seconds', '1'],
  ['clients', 'show', 'ghost'],
  ['clients', 'add', 'bad id!'],
  ['clients', 'add', 'x', '--engine', 'nope'],
  ['clients', 'set', 'shop', '--engine', 'nope'],
  ['clients', 'add', 'shop'],
  ['clients', 'add', 'short', '--secret', 'short'],
  ['clients', 'frobnicate'],
];

const withoutSecrets = (r: CliResult): CliResult => ({ ...r, stdout: r.stdout.replace(/^secret: \S+$/gm, 'secret: <generated>') });

/** Resolves once a session of the database at `url` waits on a lock (polled: PostgreSQL announces no such event). */
async function waitForLockWait(url: string): Promise<void> {
  const watcher = new pg.Client({ connectionString: url });
  await watcher.connect();
  try {
    for (let tries = 0; tries < 500; tries++) {
      const { rows } = await watcher.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
      if ((rows[0] as { n: number }).n > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('no session waited on a lock within 5 s');
  } finally {
    await watcher.end();
  }
}

describe('clients commands on SQLite and on PostgreSQL', { skip: postgresSkipReason() }, () => {
  let server: PgServer;
  let databases = 0;
  before(async () => {
    server = await startPostgres();
    // A linguistic collation (ICU's root: "beta" before "Zed"), as a database made with en_US.UTF-8
    // has: SQLite sorts by bytes ("Zed" first), and so must every list here.
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query("CREATE DATABASE clients_template TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'und' LOCALE 'C.UTF-8'");
    await admin.end();
    const db = new pg.Client({ connectionString: urlOf(server.url, 'clients_template') });
    await db.connect();
    await migratePg(db);
    await db.end();
  });
  after(async () => {
    await server?.stop();
  });

  /** A data folder with the engine "gpt" in its SQLite file, a fresh migrated database with the same engine, and the key file both seal with. */
  async function stores(): Promise<{ dataDir: string; keyFile: string; url: string }> {
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-clients-both-'));
    const keyFile = join(dataDir, 'shared.key');
    keyFileBox(keyFile).seal('make the key file');
    const config = engineConfigSchema.parse({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm' });
    const sqlite = createStore(openDatabase(databasePath(dataDir)));
    sqlite.engines.save('gpt', config, null, T0);
    sqlite.close();
    const url = await copyDatabase(server.url, 'clients_template', `clients_${++databases}`);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    await db.query(`INSERT INTO engines (name, kind, config, api_key_sealed, created_at, updated_at) VALUES ('gpt', 'openai', $1, NULL, $2, $2)`, [JSON.stringify(config), T0]);
    await db.end();
    return { dataDir, keyFile, url };
  }

  it('prints the same for the same commands, errors included, and PostgreSQL keeps the secrets sealed with the shared key', async () => {
    const { dataDir, keyFile, url } = await stores();
    let now = T0;
    const clock = () => now;
    for (const args of SEQUENCE) {
      now += 60_000;
      const common = [...args, '--data-dir', dataDir, '--secret-key-file', keyFile];
      const onSqlite = withoutSecrets(await cliHereArgs(common, { nowMs: clock }));
      const onPostgres = withoutSecrets(await cliHereArgs([...common, '--store', url], { nowMs: clock }));
      assert.deepEqual(onPostgres, onSqlite, args.join(' '));
    }
    // The sequence says something: a few of its outputs, as both stores printed them.
    const list = (await cliHereArgs(['clients', 'list', '--data-dir', dataDir, '--store', url])).stdout;
    assert.deepEqual(list.split('\n').map((l) => l.split(/\s+/).slice(0, 3).join(' ')), ['ID STATE SECRETS', 'Zed enabled 1', 'beta enabled 1', 'shop enabled 1', ''], 'byte order, as SQLite sorts');
    assert.match(list, /shop\s+enabled\s+1\s+https:\/\/hooks\.example\.com\/in\s+bot-1\s+all\s+2025-01-02T03:06:05\.000Z/);
    const show = await cliHereArgs(['clients', 'show', 'shop', '--data-dir', dataDir, '--store', url]);
    assert.match(show.stdout, /^secrets  …0005 \(2025-01-02T03:19:05\.000Z\)$/m, 'one active secret after --retire-previous');
    assert.match(show.stdout, /^quiet-seconds\s+1\.5$/m);
    assert.match(show.stdout, /^engine\s+gpt$/m);
    const ghost = await cliHereArgs(['clients', 'rotate', 'ghost', '--data-dir', dataDir, '--store', url]);
    assert.equal(ghost.status, 2);
    assert.match(ghost.stderr, /^error: no client "ghost"$/m);
    assert.match((await cliHereArgs(['clients', 'add', 'x', '--engine', 'nope', '--data-dir', dataDir, '--store', url])).stderr, /--engine must be one of kb, gpt, got "nope"/);

    const db = new pg.Client({ connectionString: url });
    await db.connect();
    const rows = (await db.query("SELECT sealed, hint, retired_at FROM client_secrets WHERE client_id = 'shop' ORDER BY id")).rows as Array<{ sealed: string; hint: string; retired_at: string | null }>;
    const settings = (await db.query("SELECT jsonb_typeof(settings) AS t, settings->>'quietSeconds' AS q FROM clients WHERE id = 'shop'")).rows[0] as { t: string; q: string };
    await db.end();
    assert.deepEqual(settings, { t: 'object', q: '1.5' }, 'settings are a jsonb object, not a string in one');
    assert.deepEqual(rows.map((r) => [r.hint, r.retired_at === null ? 'active' : 'retired']), [['0001', 'retired'], ['0003', 'retired'], ['0004', 'retired'], ['0005', 'active']]);
    const box = keyFileBox(keyFile);
    assert.deepEqual(rows.map((r) => box.open(r.sealed)), [1, 3, 4, 5].map(GIVEN), 'sealed with the key every node shares');
    assert.ok(rows.every((r) => !r.sealed.includes('a-chosen-secret')));
  });

  it('migrates an empty database first, and reads config.json store when neither flag nor environment names one', async () => {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query('CREATE DATABASE clients_empty TEMPLATE template0');
    await admin.end();
    const url = server.url.replace(/\/[^/]*$/, '/clients_empty');
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-clients-cfg-'));
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ store: url }));
    const first = await cliHereArgs(['clients', 'list', '--data-dir', dataDir]);
    assert.deepEqual(first, { status: 0, stdout: 'no clients yet: add one with "npm run cli -- clients add ID"\n', stderr: `PostgreSQL: applied migrations ${PG_MIGRATIONS.map((m) => m.version).join(', ')}\n` });
    const added = await cliHereArgs(['clients', 'add', 'shop', '--data-dir', dataDir]);
    assert.equal(added.status, 0, added.stderr);
    assert.equal(added.stderr, '', 'migrated once');
    assert.match((await cliHereArgs(['clients', 'list', '--data-dir', dataDir])).stdout, /^shop\s+enabled\s+1\s/m);
    assert.equal(existsSync(databasePath(dataDir)), false, 'the data folder\'s SQLite file was never opened');
    // An empty --store chooses the data folder's SQLite file over config.json.
    assert.match((await cliHereArgs(['clients', 'list', '--data-dir', dataDir, '--store', ''])).stdout, /^no clients yet/);
  });

  it('two rotations at once from two machines leave two active secrets: a new secret waits for the other on its client\'s row', async () => {
    const { url } = await stores();
    const [a, b] = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })];
    await Promise.all([a.connect(), b.connect()]);
    try {
      await a.query("INSERT INTO clients (id, created_at, updated_at) VALUES ('shop', 1, 1)");
      await a.query("INSERT INTO client_secrets (client_id, sealed, hint, created_at) VALUES ('shop', 's1', '0001', 1), ('shop', 's2', '0002', 2)");
      await a.query('BEGIN');
      await pgClientAdminStore(a).clients.addSecret('shop', 'sa', '000a', 3);
      await b.query('BEGIN');
      const second = pgClientAdminStore(b).clients.addSecret('shop', 'sb', '000b', 4);
      // B's rotation is waiting on A's (its client's row, or without that lock a secret A retired):
      // only now does A commit, the moment the race is lost without the lock.
      await waitForLockWait(url);
      await a.query('COMMIT');
      await second;
      await b.query('COMMIT');
      const active = await pgClientAdminStore(a).clients.activeSecrets('shop');
      assert.deepEqual(active.map((s) => s.hint), ['000b', '000a']);
    } finally {
      await Promise.all([a.end(), b.end()]);
    }
  });
});

describe('a store URL for commands that do not run on PostgreSQL', () => {
  const PG = 'postgres://sb@127.0.0.1:9/none';
  const DO = 'These do: clients, kb, engines, agents, deliveries, secrets, console';
  const WHY: Record<string, string> = {
    backup: 'it copies the data folder\'s SQLite file; back up a PostgreSQL database with pg_dump (for example pg_dump -Fc -f switchboard.dump "$SWITCHBOARD_STORE")',
    eval: 'not yet (issue 30): its replays are written for the data folder\'s SQLite file',
  };
  const refused = (group: string) => `error: "${group}" does not run on PostgreSQL: ${WHY[group]}. ${DO}\n`;

  it('is refused in one line with exit 2 and why, from the flag, the environment or config.json, before the data folder is touched', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-clients-refuse-'));
    assert.deepEqual(await cliHereArgs(['backup', 'x.db', '--data-dir', dataDir, '--store', PG]), { status: 2, stdout: '', stderr: refused('backup') });
    assert.deepEqual(await cliHereArgs(['eval', 'list', '--data-dir', dataDir], { env: { SWITCHBOARD_STORE: PG } }), { status: 2, stdout: '', stderr: refused('eval') });
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ store: PG }));
    assert.deepEqual(await cliHereArgs(['backup', 'y.db', '--data-dir', dataDir]), { status: 2, stdout: '', stderr: refused('backup') });
    assert.equal(existsSync(databasePath(dataDir)), false, 'no SQLite file made');
    assert.equal(existsSync(join(dataDir, 'secret.key')), false, 'no key made');
  });

  it('refuses a store setting that is not a postgres:// URL in the line serve prints', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-clients-refuse-'));
    assert.deepEqual(await cliHereArgs(['clients', 'list', '--data-dir', dataDir, '--store', 'mysql://db/x']), {
      status: 2,
      stdout: '',
      stderr: 'error: --store must be a postgres:// URL (or unset for the data folder\'s SQLite file), got "mysql://db/x"\n',
    });
    const env = await cliHereArgs(['clients', 'list', '--data-dir', dataDir], { env: { SWITCHBOARD_STORE: 'sqlite' } });
    assert.equal(env.stderr, 'error: SWITCHBOARD_STORE must be a postgres:// URL (or unset for the data folder\'s SQLite file), got "sqlite"\n');
    assert.equal(existsSync(databasePath(dataDir)), false);
  });

  it('says a database it cannot reach is unreachable, the password hidden, exit 1', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-clients-refuse-'));
    const r = await cliHereArgs(['clients', 'list', '--data-dir', dataDir, '--store', 'postgres://sb:hunter2@127.0.0.1:9/none']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^error: cannot reach PostgreSQL at postgres:\/\/sb:\*\*\*@127\.0\.0\.1:9\/none: .*ECONNREFUSED/);
    assert.ok(!r.stderr.includes('hunter2'));
  });

  it('leaves store copy (its own --to) and secrets new-key (no store) alone', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-clients-refuse-'));
    const copy = await cliHereArgs(['store', 'copy', '--data-dir', dataDir], { env: { SWITCHBOARD_STORE: PG } });
    assert.match(copy.stderr, /^error: store copy needs --to postgres:/);
    const key = await cliHereArgs(['secrets', 'new-key', join(dataDir, 'nodes.key'), '--store', PG]);
    assert.equal(key.status, 0, key.stderr);
    assert.match(key.stdout, /^wrote a new key to /);
  });
});
