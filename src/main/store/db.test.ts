import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, WRITER_WAL_AUTOCHECKPOINT_PAGES, type Db } from './db.ts';
import { openWriterStore } from './index.ts';
import { createWriteQueue } from './write-queue.ts';
import { startWorkerWriter } from './worker-writer.ts';
import type { WriteCommand, WriteResult } from '../conversations/write-commands.ts';

const root = mkdtempSync(join(tmpdir(), 'sb-db-'));
after(() => rmSync(root, { recursive: true, force: true }));
const size = (p: string): number => statSync(p).size;
const PAGE = 4096;

/** Request-log rows of about a database page each. */
function logRows(count: number): WriteCommand[] {
  return Array.from({ length: count }, (_, i) => ({
    kind: 'request_log',
    entry: { at: 1_700_000_000_000 + i, requestId: `r-${i}`, method: 'POST', path: '/custom-im/chat-messages', clientId: null, eventType: null, msgId: null, conversationId: null, status: 400, code: 'x', latencyMs: 1, replayed: false, problem: 'p'.repeat(PAGE - 300), remote: null, verified: false },
  }));
}

test('the writer thread checkpoints past WRITER_WAL_AUTOCHECKPOINT_PAGES, not at SQLite’s 1000 pages: its commits stay off the database file meanwhile', async () => {
  const dir = join(root, 'writer');
  const path = join(dir, 'switchboard.db');
  openDatabase(path).close();
  const before = size(path);
  const writer = await startWorkerWriter<WriteCommand, WriteResult>(new URL('../writer-worker.ts', import.meta.url), { databasePath: path, busyTimeoutMs: 5000 }, () => {});
  try {
    // 400 commits of a row and its index pages each: past 1000 WAL pages, where the default would
    // have checkpointed, and short of the writer's limit.
    for (const command of logRows(400)) await writer.submit(command);
    const wal = size(`${path}-wal`);
    assert.ok(wal > 1000 * PAGE && wal < WRITER_WAL_AUTOCHECKPOINT_PAGES * PAGE, `WAL holds the pages: ${wal} bytes`);
    assert.ok(size(path) < before + 100 * PAGE, `database file untouched until the larger checkpoint: ${before} -> ${size(path)} bytes`);
  } finally {
    await writer.close();
  }
  // Closing the last connection still checkpoints everything into the file.
  assert.ok(size(path) > before + 400 * PAGE);
});

test('a write nobody waits for that fails is the writer thread\'s background error; the thread goes on writing', async () => {
  const dir = join(root, 'background');
  const path = join(dir, 'switchboard.db');
  openDatabase(path).close();
  const errors: string[] = [];
  const writer = await startWorkerWriter<WriteCommand, WriteResult>(new URL('../writer-worker.ts', import.meta.url), { databasePath: path, busyTimeoutMs: 5000 }, (m) => errors.push(m));
  try {
    const [bad] = logRows(1);
    // A request-log row the table refuses (status is NOT NULL), sent as the HTTP server sends its rows.
    writer.send({ ...bad!, entry: { ...(bad as Extract<WriteCommand, { kind: 'request_log' }>).entry, status: null as unknown as number } } as WriteCommand);
    await writer.drain();
    assert.equal(errors.length, 1, 'reported once');
    assert.match(errors[0]!, /NOT NULL constraint failed: request_log\.status/);
    // The thread is alive and writes on.
    const [good] = logRows(2).slice(1);
    assert.equal(await writer.submit(good!), null);
  } finally {
    await writer.close();
  }
  const db = openDatabase(path);
  assert.equal((db.prepare('SELECT count(*) AS n FROM request_log').get() as { n: number }).n, 1, 'only the good row');
  db.close();
});

test('walAutocheckpointPages bounds the WAL a connection commits into', () => {
  const path = join(root, 'small', 'switchboard.db');
  const db = openDatabase(path, { walAutocheckpointPages: 64 });
  assert.equal((db.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint, 64);
  const before = size(path);
  const insert = db.prepare("INSERT INTO settings (key, value) VALUES (?, ?)");
  for (let i = 0; i < 200; i++) insert.run(`k${i}`, 'v'.repeat(PAGE - 200));
  assert.ok(size(path) > before + 100 * PAGE, 'checkpointed into the file as it went');
  assert.ok(size(`${path}-wal`) < 100 * PAGE, `the WAL is reused from its start after each checkpoint: ${size(`${path}-wal`)} bytes`);
  db.close();
  assert.ok(WRITER_WAL_AUTOCHECKPOINT_PAGES > 1000);
});

/** SQLite's temporary files (named etilqs_…) this process has open, unlinked or not. */
function openTempFiles(): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.includes('etilqs_') ? [target] : [];
    } catch {
      return []; // closed meanwhile (readdir's own descriptor)
    }
  });
}

/** Temporary files seen open during a group transaction whose job rewrites ~200 existing pages in its savepoint. */
async function tempFilesDuringBatch(open: (path: string) => Db): Promise<string[]> {
  const db = open(join(mkdtempSync(join(root, 'temp-')), 'switchboard.db'));
  const queue = createWriteQueue(db);
  const insert = db.prepare('INSERT INTO settings (key, value) VALUES (?, ?)');
  const update = db.prepare("UPDATE settings SET value = ? WHERE key LIKE 'k%'");
  let seen: string[] = [];
  try {
    // Pages that exist before a savepoint are the ones it must be able to restore.
    await queue.run(() => {
      for (let i = 0; i < 200; i++) insert.run(`k${i}`, 'v'.repeat(PAGE - 200));
    });
    await queue.run(() => {
      update.run('w'.repeat(PAGE - 200));
      seen = openTempFiles();
    });
  } finally {
    db.close();
  }
  return seen;
}

test('the writer keeps its savepoints’ sub-journal in memory: a group transaction opens no temporary file', { skip: process.platform === 'linux' ? false : 'reads /proc/self/fd, which only Linux has' }, async () => {
  // The control proves the check sees the file SQLite spills to past 64 KiB by default.
  assert.notDeepEqual(await tempFilesDuringBatch((path) => openDatabase(path)), [], 'by default the sub-journal spills to a file');
  // The writer thread's own store, as writer-worker.ts opens it.
  assert.deepEqual(await tempFilesDuringBatch((path) => openWriterStore(path, 5000).connection), []);
});

test('FTS5\'s own rowid-range reads and trims stay index seeks on a new store: statistics taken while the index was nearly empty are replaced', () => {
  const path = join(root, 'fts-stats', 'switchboard.db');
  const plan = (db: Db): string =>
    (db.prepare('EXPLAIN QUERY PLAN SELECT block FROM messages_fts_data WHERE id >= ? AND id <= ?').all(1, 2) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
  const first = openDatabase(path);
  assert.match(plan(first), /SEARCH messages_fts_data USING INTEGER PRIMARY KEY/);
  first.close();
  // Reopened: PRAGMA optimize may measure the still-small table again; the figure is pinned again.
  const again = openDatabase(path);
  assert.match(plan(again), /SEARCH messages_fts_data USING INTEGER PRIMARY KEY/);
  assert.deepEqual(again.prepare("SELECT tbl, stat FROM sqlite_stat1 WHERE tbl GLOB '*_fts_data' ORDER BY tbl").all().map((r) => ({ ...r })), [
    { tbl: 'kb_fts_data', stat: '1000000' },
    { tbl: 'messages_fts_data', stat: '1000000' },
  ]);
  assert.ok((again.prepare('SELECT count(*) AS n FROM sqlite_stat1').get() as { n: number }).n > 0, 'the other tables keep theirs');
  again.close();
});
