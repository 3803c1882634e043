import { parentPort, workerData } from 'node:worker_threads';
import { DatabaseSync } from 'node:sqlite';
import { systemClock } from '../shared/clock.ts';
import { kbQueries } from './store/kb.ts';
import { messageContext } from './store/message-context.ts';
import { createKbEngine } from './engines/kb-engine.ts';
import { createIndexedKnowledge } from './engines/kb-index.ts';
import { createEngineRouter } from './engines/router.ts';
import { createSemantic } from './engines/embeddings/semantic.ts';
import { kbVectorQueries } from './store/kb-vectors.ts';
import { EngineTimeout } from './engines/ask.ts';
import { toContextLine } from './engines/engine.ts';
import type { FromEngineWorker, ToEngineWorker } from './engines/worker-engine.ts';
import type { EngineConfig } from '../shared/engine-config.ts';
import { assertNever } from '../shared/assert-never.ts';
import { thresholdSource } from './engines/kb-threshold.ts';
import { settingsQueries } from './store/settings.ts';

// Composition root of the engine thread: its own read-only connection (WAL readers never block the
// writer), the knowledge-base engine and the router, as the service builds them in-process.
// Main chose each request's engine and sent configured engines with their opened keys.
const port = parentPort!;
const { databasePath, busyTimeoutMs, kbThreshold } = workerData as { databasePath: string; busyTimeoutMs: number; kbThreshold: number };
const db = new DatabaseSync(databasePath, { readOnly: true, timeout: busyTimeoutMs });
// Matched in memory; rebuilt when the knowledge base's version changes, which is read before every match.
const knowledge = createIndexedKnowledge(kbQueries(db));
// The threshold an admin set from the console, read at each question; else serve's kbThreshold.
const threshold = thresholdSource(settingsQueries(db), kbThreshold);
// Auto replies name their transcript lines rather than carry them: read here, off the main thread.
const readContext = messageContext(db);
const configured = new Map<string, { config: EngineConfig; updatedAt: number; apiKey: string | null }>();
const kb = kbQueries(db);
const kbVectors = kbVectorQueries(db);
// Vectors are computed here, in the background, and stored by the writer thread through main.
const semantic = createSemantic({
  knowledge,
  access: { entries: () => kb.all(), version: () => kb.version(), stored: (model) => kbVectors.forModel(model), save: (write) => post({ type: 'vectors', write }) },
  clock: systemClock,
  log: (line) => post({ type: 'log', line }),
});
// Requests arrive already routed: the router here is keyed by engine name, not by client.
const router = createEngineRouter({
  builtin: createKbEngine(knowledge, { threshold, queryMessages: 3 }),
  knowledge,
  semantic: { rankerFor: semantic.rankerFor, kbOptions: { threshold, queryMessages: 3 } },
  engineOf: (name) => name,
  load: (name) => {
    const c = configured.get(name);
    return c && { name, config: c.config, updatedAt: c.updatedAt, apiKey: () => c.apiKey };
  },
});
const running = new Map<number, AbortController>();

const post = (msg: FromEngineWorker): void => port.postMessage(msg);

type AnswerMessage = Extract<ToEngineWorker, { type: 'answer' }>;
// Someone waits on an HTTP answer (website, assist) or the console (suggestions): those go first;
// auto replies, which fire in bursts when quiet periods end, take what is left. One per turn, so
// messages that arrive meanwhile are sorted before the next is started.
const waitingCallers: AnswerMessage[] = [];
const background: AnswerMessage[] = [];
let draining = false;
/** Aborted before they started: skipped when their turn comes. */
const cancelled = new Set<number>();

function drain(): void {
  const msg = waitingCallers.shift() ?? background.shift();
  if (!msg) {
    draining = false;
    return;
  }
  if (!cancelled.delete(msg.id)) start(msg);
  setImmediate(drain);
}

function start(msg: AnswerMessage): void {
  const { route } = msg;
  const controller = new AbortController();
  running.set(msg.id, controller);
  const budget = msg.remainingMs === null ? undefined : { clock: systemClock, endsAt: systemClock.now() + msg.remainingMs };
  Promise.resolve()
    .then(() => {
      const { contextOf, ...request } = msg.request;
      const context = contextOf
        ? readContext(contextOf.conversationId, contextOf.uptoId, contextOf.lines).map(toContextLine)
        : request.context;
      return router.answer({ ...request, context, clientId: route.name, budget }, controller.signal);
    })
    .then(
      (answer) => post({ type: 'answer', id: msg.id, answer }),
      (error: unknown) =>
        post({ type: 'error', id: msg.id, error: (error as Error).message, ...(error instanceof EngineTimeout ? { timedOut: error.engine } : {}) }),
    )
    .finally(() => running.delete(msg.id));
}

port.on('message', (msg: ToEngineWorker) => {
  switch (msg.type) {
    case 'close':
      waitingCallers.length = 0;
      background.length = 0;
      for (const c of running.values()) c.abort();
      semantic.close();
      db.close();
      port.close();
      return;
    case 'abort':
      if (running.has(msg.id)) running.get(msg.id)!.abort();
      else if (waitingCallers.some((m) => m.id === msg.id) || background.some((m) => m.id === msg.id)) cancelled.add(msg.id);
      running.delete(msg.id);
      return;
    case 'answer': {
      // Engine versions are taken in the order main sent them (a key comes once per version).
      const { route } = msg;
      if (route.kind === 'missing') configured.delete(route.name);
      if (route.kind === 'configured' && route.config) configured.set(route.name, { config: route.config, updatedAt: route.updatedAt, apiKey: route.apiKey ?? null });
      (msg.request.purpose === 'auto_reply' ? background : waitingCallers).push(msg);
      if (!draining) {
        draining = true;
        setImmediate(drain);
      }
      return;
    }
    default:
      assertNever(msg, 'engine worker message');
  }
});

post({ type: 'ready' });
// The index is built now rather than in the first question's time.
setImmediate(() => {
  try {
    knowledge.refresh();
  } catch {
    // Closed before it ran, or a read error that the first question will report.
  }
});
