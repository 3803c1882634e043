import { parentPort, workerData } from 'node:worker_threads';
import { openWriterStore } from './store/index.ts';
import { createWriteQueue } from './store/write-queue.ts';
import type { FromWriter, ToWriter } from './store/worker-writer.ts';
import { executeWrite, type WriteResult, type WriteCommand } from './conversations/write-commands.ts';

// Composition root of the writer thread: its own connection, the group-commit queue, and the
// commands of the message service. Results go back once per turn of this thread's loop.
const port = parentPort!;
const { databasePath, busyTimeoutMs } = workerData as { databasePath: string; busyTimeoutMs: number };
// Messages another writer (a bulk load) stored without indexing them are indexed as it opens, before the first request.
const store = openWriterStore(databasePath, busyTimeoutMs);
const queue = createWriteQueue(store.connection, (error) => post({ type: 'background_error', error: (error as Error).message }), {
  beforeCommit: () => void store.searchIndex.flushQueue(),
});

type Result = Extract<FromWriter<WriteResult>, { type: 'results' }>['results'][number];
let results: Result[] = [];
let scheduled = false;

function post(msg: FromWriter<WriteResult>): void {
  port.postMessage(msg);
}

function sendResults(): void {
  scheduled = false;
  const batch = results;
  results = [];
  post({ type: 'results', results: batch, stats: { ...queue.stats } });
}

function collect(result: Result): void {
  results.push(result);
  if (!scheduled) {
    scheduled = true;
    setImmediate(sendResults);
  }
}

port.on('message', (msg: ToWriter<WriteCommand>) => {
  if (msg.type === 'close') {
    void queue.drain().then(() => {
      if (results.length > 0) sendResults();
      store.close();
      post({ type: 'closed' });
    });
    return;
  }
  for (const job of msg.jobs) {
    const op = (): Promise<WriteResult> => executeWrite(store, job.command);
    if (job.wait) {
      queue.run(op).then(
        (value) => collect({ id: job.id, ok: true, value }),
        (error: unknown) => collect({ id: job.id, ok: false, error: (error as Error).message }),
      );
    } else {
      // Reported once settled, so drain() on the main thread covers it too, a failed one included
      // (its error goes out as a background error). The command's promise goes to the queue: a
      // write that fails is never an unheard rejection, which would end this thread.
      queue.fireAndForget(() => op().then(() => {}), () => collect({ id: job.id, ok: true, value: null }));
    }
  }
});

post({ type: 'ready' });
