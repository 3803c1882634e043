import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { postgresSkipReason, startPostgres, type PgServer } from './helpers/postgres.ts';
import { eventually } from './helpers/receiver.ts';

const skip = postgresSkipReason();

const postmasterPid = (server: PgServer): number => Number(readFileSync(join(server.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** The OS user id a process runs as (Linux /proc). */
const uidOf = (pid: number): number => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

/** One query on a fresh connection through node-postgres (the driver bench/pg-drivers chose). */
async function query<T extends object>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

// Each test starts its own server; they run side by side so the file stays near 2 s.
describe('the throwaway PostgreSQL server of the tests', { skip, concurrency: true }, () => {
  it('starts on 127.0.0.1, takes a connection, runs not durable by default; stop() ends the server and deletes its folder', async () => {
    const server = await startPostgres();
    const pid = postmasterPid(server);
    try {
      assert.match(server.url, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
      const [row] = await query<{ one: number; fsync: string; sync: string; encoding: string }>(
        server.url,
        "SELECT 1 AS one, current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync, current_setting('server_encoding') AS encoding",
      );
      assert.deepEqual(row, { one: 1, fsync: 'off', sync: 'off', encoding: 'UTF8' });
      // PostgreSQL refuses root: under root the server must run as the postgres user.
      if (process.getuid?.() === 0) assert.notEqual(uidOf(pid), 0);
    } finally {
      await server.stop();
    }
    assert.equal(existsSync(server.dir), false, 'the folder is gone');
    // pg_ctl stop -w returns once the postmaster removed its pid file, a moment before it exits.
    await eventually(() => !alive(pid), 'the postmaster to exit');
    await assert.rejects(query(server.url, 'SELECT 1'), 'nothing listens on the port any more');
    await server.stop(); // twice is harmless
  });

  it('durable: true turns fsync and synchronous commit on (what a crash-safety test needs)', async () => {
    const server = await startPostgres({ durable: true });
    try {
      const [row] = await query<{ fsync: string; sync: string; fpw: string }>(
        server.url,
        "SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync, current_setting('full_page_writes') AS fpw",
      );
      assert.deepEqual(row, { fsync: 'on', sync: 'on', fpw: 'on' });
    } finally {
      await server.stop();
    }
  });

  it('a test process killed with SIGKILL leaves no server and no folder behind', async () => {
    // A child that starts a server, says where it is, and dies without calling stop().
    const program = `
      import { startPostgres } from ${JSON.stringify(new URL('./helpers/postgres.ts', import.meta.url).href)};
      import { readFileSync } from 'node:fs';
      const s = await startPostgres();
      console.log(s.dir, readFileSync(s.dataDir + '/postmaster.pid', 'utf8').split('\\n')[0]);
      process.kill(process.pid, 'SIGKILL');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', program], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [line] = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next().then((r) => [r.value as string]);
    const [dir, pidText] = line!.split(' ');
    const pid = Number(pidText);
    assert.ok(dir!.startsWith(tmpdir()) && pid > 0, `the child said: ${line}`);
    await eventually(() => !alive(pid) && !existsSync(dir!), 'the watchdog to stop the server and delete the folder');
  });
});

describe('the cluster template (npm test runs initdb once, test/run.ts)', { skip }, () => {
  it('the first server keeps its fresh cluster as the template; the next copies it, and each server still has a cluster of its own', async () => {
    const templates = mkdtempSync(join(tmpdir(), 'sb-pg-templates-'));
    chmodSync(templates, 0o1777);
    const first = await startPostgres({ templates });
    try {
      const kept = readdirSync(templates);
      assert.equal(kept.length, 1, `one template, no half-made copy: ${kept.join(', ')}`);
      const template = join(templates, kept[0]!);
      assert.ok(existsSync(join(template, 'PG_VERSION')), 'a whole cluster');
      assert.ok(!existsSync(join(template, 'postmaster.pid')), 'taken before the server started');
      assert.doesNotMatch(readFileSync(join(template, 'postgresql.auto.conf'), 'utf8'), /port =/, 'without this server\'s settings');
      const second = await startPostgres({ templates });
      try {
        assert.notEqual(second.port, first.port);
        const id = async (server: PgServer) => (await query<{ id: string }>(server.url, 'SELECT system_identifier::text AS id FROM pg_control_system()'))[0]!.id;
        // initdb gives every cluster a new identifier: the same one means the second was copied.
        assert.equal(await id(second), await id(first), 'the second server copied the template');
        await query(first.url, 'CREATE TABLE only_in_first (x int)');
        const [seen] = await query<{ n: number }>(second.url, "SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'only_in_first'");
        assert.deepEqual(seen, { n: 0 }, 'a copy of its own, not the first server\'s files');
      } finally {
        await second.stop();
      }
    } finally {
      await first.stop();
      rmSync(templates, { recursive: true, force: true });
    }
  });
});

describe('without PostgreSQL', () => {
  it('the skip reason is one clear line, and startPostgres() fails with it', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'sb-no-pg-'));
    try {
      const reason = postgresSkipReason({ libDir: empty, path: empty });
      assert.equal(typeof reason, 'string');
      assert.match(reason as string, /^PostgreSQL is not installed: no initdb, pg_ctl and postgres in .+ or on PATH \(apt-get install postgresql\)$/);
      await assert.rejects(startPostgres({ libDir: empty, path: empty }), { message: reason as string });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
