import { parentPort, workerData } from 'node:worker_threads';
import { setPriority } from 'node:os';
import { DatabaseSync } from 'node:sqlite';
import { createStore } from './store/index.ts';
import { consoleReads } from './store/console-reads.ts';
import { serveReads } from './store/worker-reader.ts';

// Composition root of the console's read thread: its own read-only connection (WAL readers never
// block the writer) and the console's reads. The main thread migrated the database before this starts.
const { databasePath, busyTimeoutMs } = workerData as { databasePath: string; busyTimeoutMs: number };
// On Linux a thread's nice value is its own: when the cores are busy, a long search gives way to
// the thread serving ingest. Elsewhere this would lower the whole process, so it is left alone.
if (process.platform === 'linux') {
  try {
    setPriority(10);
  } catch {
    // Not permitted here: the search only competes on equal terms.
  }
}
const db = new DatabaseSync(databasePath, { readOnly: true, timeout: busyTimeoutMs });
serveReads(parentPort!, db, consoleReads(createStore(db)));
