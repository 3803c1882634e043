import { WORKER_RESOURCE_LIMITS } from '../runtime-flags.ts';
import { untilReady } from '../worker-ready.ts';
import { Worker } from 'node:worker_threads';
import type { Engine, EngineAnswer, EngineRequest } from './engine.ts';
import { EngineTimeout } from './ask.ts';
import type { EngineConfig } from '../../shared/engine-config.ts';
import { BUILTIN_ENGINE } from '../../shared/engine-config.ts';
import { assertNever } from '../../shared/assert-never.ts';
import type { KbVectorsWrite } from './embeddings/entry-vectors.ts';

/** The engine a request goes to, chosen on the main thread (client settings live there). */
export type Route =
  | { name: string; kind: 'builtin' }
  | { name: string; kind: 'missing' }
  /** `apiKey` is present only when this name and version were not sent before. */
  | { name: string; kind: 'configured'; updatedAt: number; config?: EngineConfig; apiKey?: string | null };

/** What crosses to the engine thread: data only; the budget's clock becomes the milliseconds left. */
export type ToEngineWorker =
  | { type: 'answer'; id: number; request: Omit<EngineRequest, 'budget'>; remainingMs: number | null; route: Route }
  | { type: 'abort'; id: number }
  | { type: 'close' };

export type FromEngineWorker =
  | { type: 'ready' }
  | { type: 'answer'; id: number; answer: EngineAnswer }
  | { type: 'error'; id: number; error: string; timedOut?: string }
  /** Knowledge-base vectors computed there, for main to hand to the writer thread. */
  | { type: 'vectors'; write: KbVectorsWrite }
  | { type: 'log'; line: string };

export interface WorkerEngineDeps {
  /** The engine name a client chose (its settings), "kb" when none. */
  engineOf: (clientId: string) => string;
  /** A configured engine's row with its key opened; undefined when there is none by that name. */
  load: (name: string) => { config: EngineConfig; updatedAt: number; apiKey: () => string | null } | undefined;
  /** Stores vectors the engine thread computed (its connection is read-only). */
  saveVectors?: (write: KbVectorsWrite) => void;
  log?: (line: string) => void;
}

export interface WorkerEngine extends Engine {
  close(): Promise<void>;
}

/**
 * An Engine whose answers are computed on the engine thread (knowledge-base match, LLM calls), so
 * composing replies never stalls the loop that serves HTTP. Callers keep their time-outs, decisions
 * and writes: only the answer is computed elsewhere. Keys are opened here, where the secret box
 * lives, and sent once per engine version.
 */
export async function startWorkerEngine(entry: URL | string, workerData: unknown, deps: WorkerEngineDeps): Promise<WorkerEngine> {
  const worker = new Worker(entry, { workerData, resourceLimits: WORKER_RESOURCE_LIMITS });
  const waiting = new Map<number, { resolve: (a: EngineAnswer) => void; reject: (e: Error) => void }>();
  const sentVersions = new Map<string, number>();
  let nextId = 1;
  let failed: Error | null = null;

  const fail = (error: Error): void => {
    failed ??= error;
    for (const w of waiting.values()) w.reject(error);
    waiting.clear();
  };
  const exited = new Promise<void>((resolve) => {
    worker.on('message', (msg: FromEngineWorker) => {
      switch (msg.type) {
        case 'ready':
          break;
        case 'answer':
          waiting.get(msg.id)?.resolve(msg.answer);
          waiting.delete(msg.id);
          break;
        case 'vectors':
          deps.saveVectors?.(msg.write);
          break;
        case 'log':
          deps.log?.(msg.line);
          break;
        case 'error':
          // A spent budget stays an EngineTimeout: callers map it per scenario (handoff, 504).
          waiting.get(msg.id)?.reject(msg.timedOut === undefined ? new Error(msg.error) : new EngineTimeout(msg.timedOut, msg.error));
          waiting.delete(msg.id);
          break;
        default:
          assertNever(msg, 'engine worker message');
      }
    });
    worker.on('error', (error) => fail(new Error(`engine worker failed: ${error.message}`)));
    worker.on('exit', (code) => {
      fail(new Error(`engine worker exited with code ${code}`));
      resolve();
    });
  });
  await untilReady(worker, 'engine worker');

  const route = (request: EngineRequest): Route => {
    const name = request.clientId ? deps.engineOf(request.clientId) : BUILTIN_ENGINE;
    if (name === BUILTIN_ENGINE) return { name, kind: 'builtin' };
    const loaded = deps.load(name);
    if (!loaded) {
      sentVersions.delete(name);
      return { name, kind: 'missing' };
    }
    if (sentVersions.get(name) === loaded.updatedAt) return { name, kind: 'configured', updatedAt: loaded.updatedAt };
    const fresh: Route = { name, kind: 'configured', updatedAt: loaded.updatedAt, config: loaded.config, apiKey: loaded.apiKey() };
    sentVersions.set(name, loaded.updatedAt);
    return fresh;
  };

  return {
    name: 'router',
    readsContext: true,
    nameFor: (request) => (request.clientId ? deps.engineOf(request.clientId) : BUILTIN_ENGINE),
    answer(request, signal) {
      return new Promise<EngineAnswer>((resolve, reject) => {
        if (failed) return reject(failed);
        if (signal.aborted) return reject(signal.reason as Error);
        const id = nextId++;
        const { budget, ...data } = request;
        const remainingMs = budget ? Math.max(0, budget.endsAt - budget.clock.now()) : null;
        let message: ToEngineWorker;
        try {
          message = { type: 'answer', id, request: data, remainingMs, route: route(request) };
        } catch (error) {
          return reject(error as Error);
        }
        const onAbort = (): void => {
          worker.postMessage({ type: 'abort', id } satisfies ToEngineWorker);
          waiting.delete(id);
          // Later, as an in-process engine would: the caller's own time-out, raised with the abort, wins.
          setImmediate(() => reject(signal.reason as Error));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        const done = (): void => signal.removeEventListener('abort', onAbort);
        waiting.set(id, {
          resolve: (a) => (done(), resolve(a)),
          reject: (e) => (done(), reject(e)),
        });
        worker.postMessage(message);
      });
    },
    async close() {
      if (!failed) worker.postMessage({ type: 'close' } satisfies ToEngineWorker);
      await exited;
    },
  };
}
