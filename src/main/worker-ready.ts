import type { Worker } from 'node:worker_threads';

/**
 * Resolves when `worker` posts `{ type: 'ready' }`; rejects if it fails or exits first (a thread
 * that dies while opening its database must not leave start-up waiting forever). The writer,
 * engine and console read threads all start this way.
 */
export function untilReady(worker: Worker, what: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    const onMessage = (msg: { type?: unknown }): void => {
      if (msg?.type !== 'ready') return;
      done();
      resolve();
    };
    const onError = (error: Error): void => {
      done();
      reject(error);
    };
    const onExit = (code: number): void => {
      done();
      reject(new Error(`${what} exited with code ${code} before it was ready`));
    };
    worker.on('message', onMessage);
    worker.once('error', onError);
    worker.once('exit', onExit);
  });
}
