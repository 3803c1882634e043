import { WORKER_RESOURCE_LIMITS } from '../runtime-flags.ts';
import { untilReady } from '../worker-ready.ts';
import { Worker, type MessagePort } from 'node:worker_threads';
import type { Db } from './db.ts';
import { assertNever } from '../../shared/assert-never.ts';

/**
 * Named read functions: arguments and results are plain data (they cross threads by structured
 * clone). A map like this is all a read thread needs; adding a read is adding an entry.
 */
export type ReadFunctions = Record<string, (...args: never[]) => unknown>;

/** The same reads, awaited: computed on the read thread, or in-process when it is off. */
export type Reads<Q extends ReadFunctions> = { [K in keyof Q]: (...args: Parameters<Q[K]>) => Promise<Awaited<ReturnType<Q[K]>>> };

export interface ReadClient<Q extends ReadFunctions> {
  reads: Reads<Q>;
  /** Answers the reads already sent, then ends the thread; later reads are refused. */
  close(): Promise<void>;
}

/** Messages between the main thread and the read thread. */
export type ToReader = { type: 'read'; id: number; name: string; args: unknown[] } | { type: 'close' };
export type FromReader =
  | { type: 'ready' }
  | { type: 'result'; id: number; ok: true; value: unknown }
  | { type: 'result'; id: number; ok: false; error: { message: string } };

/** A read that failed on the read thread (its error's message), or that the thread could not answer. */
export class ReadError extends Error {}

/** In a row, without one answered read between them: after this many the reads move in-process. */
const MAX_CRASHES = 3;
/** How long close waits for the read in progress before ending the thread. */
const CLOSE_GRACE_MS = 5000;

/** The reads run on this thread, each when called: the path with the read thread off. */
export function inProcessReads<Q extends ReadFunctions>(queries: Q): Reads<Q> {
  const out: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const [name, fn] of Object.entries(queries) as Array<[string, (...args: unknown[]) => unknown]>) {
    out[name] = async (...args) => await fn(...args);
  }
  return out as Reads<Q>;
}

/**
 * Serves `queries` on a read thread (its composition root calls this). Reads are answered one at
 * a time in arrival order, each in its own read transaction: a read that runs several statements
 * sees one snapshot, and every read starts after the commits that preceded its request.
 */
export function serveReads(port: MessagePort, db: Db, queries: ReadFunctions): void {
  const post = (msg: FromReader): void => port.postMessage(msg);
  /** One read after the other: a read's awaits must not let the next one into its transaction. */
  let queue: Promise<void> = Promise.resolve();
  async function answer(msg: Extract<ToReader, { type: 'read' }>): Promise<void> {
    const fn = Object.hasOwn(queries, msg.name) ? (queries[msg.name] as (...args: unknown[]) => unknown) : undefined;
    if (!fn) return post({ type: 'result', id: msg.id, ok: false, error: { message: `no read named "${msg.name}"` } });
    let value: unknown;
    try {
      db.exec('BEGIN');
      try {
        // Reads are written against the store contract (awaited); on this connection they are plain values.
        value = await fn(...msg.args);
      } finally {
        db.exec('COMMIT');
      }
    } catch (error) {
      return post({ type: 'result', id: msg.id, ok: false, error: { message: error instanceof Error ? error.message : String(error) } });
    }
    try {
      post({ type: 'result', id: msg.id, ok: true, value });
    } catch (error) {
      // A result that is not plain data: a bug in the read, said as such rather than a lost answer.
      post({ type: 'result', id: msg.id, ok: false, error: { message: `read "${msg.name}" returned what cannot cross threads: ${(error as Error).message}` } });
    }
  }
  port.on('message', (msg: ToReader) => {
    switch (msg.type) {
      case 'close':
        queue = queue.then(() => {
          db.close();
          port.close();
        });
        return;
      case 'read':
        queue = queue.then(() => answer(msg));
        return;
      default:
        assertNever(msg, 'read worker message');
    }
  });
  post({ type: 'ready' });
}

interface Running {
  worker: Worker;
  exited: Promise<void>;
}

/**
 * Runs `queries`' reads on a read thread started from `entry` (which calls serveReads over its own
 * read-only connection: in WAL mode it never blocks the writer, and the writer never blocks it).
 * `queries` is this thread's copy of the map: its names, and the fallback should the thread keep
 * stopping. A read thread that stops is logged once and started again; reads it had not answered
 * fail (the console shows an error and asks again). After MAX_CRASHES stops in a row, reads run
 * in-process, logged once.
 */
export async function startReadWorker<Q extends ReadFunctions>(entry: URL | string, workerData: unknown, queries: Q, log: (line: string) => void): Promise<ReadClient<Q>> {
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let closing = false;
  let crashes = 0;
  let fallback: Reads<Q> | null = null;
  let current: Running | null = null;
  // Set while a replacement starts: reads wait for it.
  let restarting: Promise<void> | null = null;

  const start = async (): Promise<Running> => {
    const worker = new Worker(entry, { workerData, resourceLimits: WORKER_RESOURCE_LIMITS });
    let lastError: Error | null = null;
    const exited = new Promise<void>((resolve) => {
      worker.on('message', (msg: FromReader) => {
        switch (msg.type) {
          case 'ready':
            break;
          case 'result': {
            const w = waiting.get(msg.id);
            waiting.delete(msg.id);
            crashes = 0;
            if (!w) break;
            if (msg.ok) w.resolve(msg.value);
            else w.reject(new ReadError(msg.error.message));
            break;
          }
          default:
            assertNever(msg, 'read worker message');
        }
      });
      worker.on('error', (error) => (lastError = error));
      worker.on('exit', (code) => {
        resolve();
        if (closing || current?.worker !== worker) return;
        crashed(`exited with code ${code}${lastError ? ` (${lastError.message})` : ''}`);
      });
    });
    await untilReady(worker, 'read thread').catch((error: unknown) => {
      throw lastError ?? new ReadError((error as Error).message);
    });
    return { worker, exited };
  };

  current = await start();

  function crashed(why: string): void {
    current = null;
    crashes++;
    const lost = waiting.size;
    for (const w of waiting.values()) w.reject(new ReadError(`the read thread stopped before answering (${why})`));
    waiting.clear();
    if (crashes >= MAX_CRASHES) {
      fallback = inProcessReads(queries);
      log(`console reads: the read thread ${why}, ${crashes} times in a row; reads run on the main thread from now on`);
      return;
    }
    log(`console reads: the read thread ${why}; ${lost} read(s) failed; starting it again`);
    restarting = start().then(
      (running) => {
        if (closing) void running.worker.terminate();
        else current = running;
      },
      (error: unknown) => {
        fallback = inProcessReads(queries);
        log(`console reads: the read thread could not start again (${(error as Error).message}); reads run on the main thread from now on`);
      },
    ).finally(() => (restarting = null));
  }

  const call = async (name: string, args: unknown[]): Promise<unknown> => {
    if (closing) throw new ReadError('the service is stopping');
    if (restarting) await restarting;
    if (fallback) return (fallback[name] as (...a: unknown[]) => Promise<unknown>)(...args);
    const running = current;
    if (!running || closing) throw new ReadError('the read thread is not running');
    return new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      try {
        running.worker.postMessage({ type: 'read', id, name, args } satisfies ToReader);
      } catch (error) {
        // Arguments that are not plain data never leave this thread.
        waiting.delete(id);
        reject(new ReadError(`read "${name}": ${(error as Error).message}`));
      }
    });
  };

  const reads = {} as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of Object.keys(queries)) reads[name] = (...args) => call(name, args);

  return {
    reads: reads as Reads<Q>,
    async close() {
      if (closing) return;
      closing = true;
      await restarting;
      const running = current;
      if (!running) return;
      running.worker.postMessage({ type: 'close' } satisfies ToReader);
      const grace = setTimeout(() => void running.worker.terminate(), CLOSE_GRACE_MS);
      await running.exited;
      clearTimeout(grace);
      for (const w of waiting.values()) w.reject(new ReadError('the service stopped'));
      waiting.clear();
    },
  };
}
