import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from './db.ts';
import { teamQueries } from './team.ts';

/**
 * A second process's auto-assignment, for team.test.ts: its own connection to the same file,
 * claiming every listed conversation for its agent, each at the same moment as the other thread.
 * Not imported by the app.
 */
export interface ClaimJob {
  path: string;
  agentId: string;
  capacity: number;
  ids: string[];
  /** Two Int32: the start gate (0 until the test releases both threads at once), and the claims reached. */
  gate: SharedArrayBuffer;
}

if (!isMainThread) {
  const job = workerData as ClaimJob;
  const db = openDatabase(job.path, { busyTimeoutMs: 10_000 });
  const team = teamQueries(db);
  // [0]: the start gate; [1]: how many claims both threads have come to. Before each claim both
  // wait for the other, so every claim is made by the two at the same moment.
  const sync = new Int32Array(job.gate);
  // Connection open: the test releases the gate once both threads have said so.
  parentPort!.postMessage('ready');
  Atomics.wait(sync, 0, 0);
  const won: string[] = [];
  job.ids.forEach((id, i) => {
    Atomics.add(sync, 1, 1);
    Atomics.notify(sync, 1);
    for (let seen = Atomics.load(sync, 1); seen < 2 * (i + 1); seen = Atomics.load(sync, 1)) Atomics.wait(sync, 1, seen, 100);
    if (team.claim(id, job.agentId, job.capacity, Date.now())) won.push(id);
  });
  db.close();
  parentPort!.postMessage(won);
}
