import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { spawnServe, cli, type ServeProcess } from './helpers/processes.ts';

const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8).padStart(4, '0');
const FILES = ['switchboard.db', 'switchboard.db-wal', 'switchboard.db-shm', 'secret.key'];

async function stop(server: ServeProcess): Promise<void> {
  server.child.kill('SIGTERM');
  await server.exit();
}

describe('data folder permissions', { skip: process.platform === 'win32' && 'POSIX modes' }, () => {
  let root: string;
  const previousUmask = process.umask();
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'sb-perms-'));
    // Node's usual umask: on its own it would make the folder 0755 and the files 0644.
    process.umask(0o022);
  });
  after(() => {
    process.umask(previousUmask);
    rmSync(root, { recursive: true, force: true });
  });

  it('a new data folder is 0700 and the database, its WAL and SHM and the key file are 0600, with umask 022', async () => {
    const dataDir = join(root, 'fresh', 'data');
    const server = await spawnServe(dataDir);
    try {
      // A write, so the WAL certainly exists while the server runs.
      assert.equal((await fetch(server.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 400);
      assert.equal(mode(dataDir), '0700');
      for (const file of FILES) {
        assert.ok(existsSync(join(dataDir, file)), `${file} exists while serving`);
        assert.equal(mode(join(dataDir, file)), '0600', file);
      }
      assert.doesNotMatch(server.stderr(), /warning/);
    } finally {
      await stop(server);
    }
  });

  it('the CLI on a fresh folder creates it just as private', () => {
    const dataDir = join(root, 'by-cli');
    const r = cli(dataDir, 'clients', 'add', 'acme');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(mode(dataDir), '0700');
    for (const file of ['switchboard.db', 'secret.key']) assert.equal(mode(join(dataDir, file)), '0600', file);
  });

  it('an existing 0755 folder is left as it is, with exactly one warning line naming it, its mode and the fix', async () => {
    const dataDir = join(root, 'shared');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    const server = await spawnServe(dataDir);
    await stop(server);
    const warnings = server.stderr().split('\n').filter((l) => /warning/i.test(l));
    assert.equal(warnings.length, 1, server.stderr());
    const [line] = warnings as [string];
    assert.ok(line.includes(dataDir) && line.includes('0755') && line.includes(`chmod 700 '${dataDir}'`), line);
    assert.equal(mode(dataDir), '0755', 'not changed behind the operator\'s back');
    assert.equal(mode(join(dataDir, 'switchboard.db')), '0600', 'files made here are private all the same');

    // The command it prints is the fix: run it, and the next start says nothing.
    const fix = /run: (.*)$/.exec(line)![1]!;
    assert.equal(spawnSync('sh', ['-c', fix]).status, 0);
    const again = await spawnServe(dataDir);
    await stop(again);
    assert.doesNotMatch(again.stderr(), /warning/i);
  });

  it('a database file left readable by an older version is named in the one warning line', async () => {
    const dataDir = join(root, 'old');
    cli(dataDir, 'clients', 'add', 'acme');
    chmodSync(join(dataDir, 'switchboard.db'), 0o644);
    const server = await spawnServe(dataDir);
    await stop(server);
    const warnings = server.stderr().split('\n').filter((l) => /warning/i.test(l));
    assert.equal(warnings.length, 1, server.stderr());
    assert.match(warnings[0]!, /switchboard\.db 0644/);
    assert.ok(warnings[0]!.includes(`chmod 600 '${join(dataDir, 'switchboard.db')}'`), warnings[0]);
  });
});
