import { parentPort, workerData } from 'node:worker_threads';
import { writeFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { createStore } from '../../src/main/store/index.ts';
import { consoleReads } from '../../src/main/store/console-reads.ts';
import { serveReads } from '../../src/main/store/worker-reader.ts';

/**
 * The console's read thread as src/main/reader-worker.ts starts it, except that a search (the
 * `conversations` read with a search term) is held on an event the test controls: it first takes
 * the write lock of a side file, `<database>.hold`, which the test holds. The thread then blocks in
 * SQLite's busy wait until the test lets go, as a long search keeps it busy, for as long as the
 * test says rather than for however long a search takes on this machine. `<database>.held` is
 * written as the hold begins.
 */
const { databasePath, busyTimeoutMs } = workerData as { databasePath: string; busyTimeoutMs: number };
const db = new DatabaseSync(databasePath, { readOnly: true, timeout: busyTimeoutMs });
const reads = consoleReads(createStore(db));
const search = reads.conversations;
reads.conversations = (...args: Parameters<typeof search>) => {
  if (args[0]?.search) {
    const hold = new DatabaseSync(`${databasePath}.hold`, { timeout: 120_000 });
    writeFileSync(`${databasePath}.held`, '');
    hold.exec('BEGIN IMMEDIATE');
    hold.exec('ROLLBACK');
    hold.close();
  }
  return search(...args);
};
serveReads(parentPort!, db, reads);
