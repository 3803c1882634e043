import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from './db.ts';
import { teamQueries } from './team.ts';

/**
 * A second process's auto-assignment, for team.test.ts: its own connection to the same file,
 * claiming every listed conversation for its agent as fast as it can, once both threads are
 * released together. Not imported by the app.
 */
export interface ClaimJob {
  path: string;
  agentId: string;
  capacity: number;
  ids: string[];
  /** Int32 0 until the test releases both threads at once. */
  gate: SharedArrayBuffer;
}

if (!isMainThread) {
  const job = workerData as ClaimJob;
  const db = openDatabase(job.path, { busyTimeoutMs: 10_000 });
  const team = teamQueries(db);
  const gate = new Int32Array(job.gate);
  Atomics.wait(gate, 0, 0);
  const won: string[] = [];
  // A pause of up to a millisecond between claims, as between two events: without it, the thread
  // that gets the lock first can take every claim before the other's busy handler wakes up.
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (const id of job.ids) {
    if (team.claim(id, job.agentId, job.capacity, Date.now())) won.push(id);
    Atomics.wait(pause, 0, 0, Math.random());
  }
  db.close();
  parentPort!.postMessage(won);
}
