import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePrivateDir, ensurePrivateFile, permissionWarning } from './data-dir.ts';
import { openDatabase } from './db.ts';

const root = mkdtempSync(join(tmpdir(), 'sb-data-dir-'));
const previousUmask = process.umask();
after(() => {
  process.umask(previousUmask);
  rmSync(root, { recursive: true, force: true });
});
const mode = (p: string): number => statSync(p).mode & 0o777;
const posix = { skip: process.platform === 'win32' && 'POSIX modes' };

test('folders and files are owner-only whatever the umask: loose, usual or so strict it would lock the owner out', posix, () => {
  for (const umask of [0o000, 0o022, 0o077, 0o277]) {
    process.umask(umask);
    const dir = join(root, `u${umask.toString(8)}`, 'nested', 'data');
    ensurePrivateDir(dir);
    assert.equal(mode(dir), 0o700, `umask ${umask.toString(8)}`);
    assert.equal(mode(join(root, `u${umask.toString(8)}`)), 0o700, 'parents made here too');
    assert.equal(ensurePrivateFile(join(dir, 'f'), 'x'), true);
    assert.equal(mode(join(dir, 'f')), 0o600);
    assert.equal(ensurePrivateFile(join(dir, 'f'), 'y'), false, 'an existing file is not replaced');
    assert.equal(readFileSync(join(dir, 'f'), 'utf8'), 'x');
  }
  process.umask(previousUmask);
});

test('a new database, its WAL and SHM are 0600 under umask 022', posix, () => {
  process.umask(0o022);
  const dir = join(root, 'db', 'data');
  const db = openDatabase(join(dir, 'switchboard.db'));
  db.exec("INSERT INTO settings (key, value) VALUES ('k', 'v')");
  for (const f of ['switchboard.db', 'switchboard.db-wal', 'switchboard.db-shm']) assert.equal(mode(join(dir, f)), 0o600, f);
  assert.equal(mode(dir), 0o700);
  db.close();
  process.umask(previousUmask);
});

test('an existing folder keeps its mode; the warning names each loose path with its mode and the commands that fix it', posix, () => {
  const dir = join(root, "it's shared");
  mkdirSync(dir);
  chmodSync(dir, 0o750);
  ensurePrivateDir(dir);
  assert.equal(mode(dir), 0o750);
  writeFileSync(join(dir, 'a.db'), '');
  chmodSync(join(dir, 'a.db'), 0o640);
  writeFileSync(join(dir, 'ok.key'), '');
  chmodSync(join(dir, 'ok.key'), 0o600);
  const line = permissionWarning(dir, [join(dir, 'a.db'), join(dir, 'ok.key'), join(dir, 'missing')]);
  assert.equal(
    line,
    `warning: the data folder is open to other local users (${dir} 0750, a.db 0640); to make it private run: ` +
      `chmod 700 '${dir.replace("'", "'\\''")}' && chmod 600 '${join(dir, 'a.db').replace("'", "'\\''")}'`,
  );
  chmodSync(dir, 0o700);
  chmodSync(join(dir, 'a.db'), 0o600);
  assert.equal(permissionWarning(dir, [join(dir, 'a.db')]), null);
});
