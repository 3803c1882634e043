import type { StoreContract } from '../store/contract.ts';
import type { EngineRow } from '../store/engines.ts';
import type { PastQuestion } from '../store/replay.ts';
import type { Clock } from '../../shared/clock.ts';
import type { ContextLine, Engine, EngineAnswer, EngineRequest } from '../engines/engine.ts';
import { toContextLine } from '../engines/engine.ts';
import { createKbEngine } from '../engines/kb-engine.ts';
import { buildKbIndex } from '../engines/kb-index.ts';
import { createOpenAiEngine, DEFAULT_SYSTEM_PROMPT, estimateTokens } from '../engines/openai-engine.ts';
import { BUILTIN_ENGINE, type EngineConfig } from '../../shared/engine-config.ts';
import type { ReplayEstimate, ReplayParams, ReplayRowSide, ReplayRowView, ReplayRequest } from '../../shared/console-replay.ts';
import { replayRequestSchema } from '../../shared/console-replay.ts';
import { candidateKnowledge, type PendingChanges } from './candidate.ts';
import { ReplayInputError, resolveWindow } from './window.ts';
import { estimateReplay, promptTokensOf, type PlannedCall } from './estimate.ts';
import { changeOf } from './diff.ts';
import { runPool } from './pool.ts';

/** What a replay reads: past questions and their context, the clients' and engines' settings, the knowledge base. */
export type ReplayStore = Pick<StoreContract, 'engines' | 'clients' | 'messages' | 'replay' | 'kb'>;

export interface ReplayDeps {
  store: ReplayStore;
  /** Opens an engine's sealed API key. */
  openKey: (sealed: string) => string;
  /** The built-in engine's threshold now (set from the console, else the server's kbThreshold). */
  kbThreshold: number | (() => number);
  engineTimeoutMs: number;
  fallbackText: string;
  /** As many transcript lines as the live path gives an engine. */
  contextLines: number;
  /** The pending proposals; absent in a build without a proposals store. */
  pendingChanges?: PendingChanges;
  /** Engine time-outs run on it. */
  clock: Clock;
  /** Measures each answer's time; performance.now by default. */
  now?: () => number;
}

export const NO_PROPOSALS = 'no proposals store in this build: --with-proposals cannot add pending proposals';

/** One side's engine for a question: built once per name and side. */
interface Side {
  engine: (name: string) => { engine: Engine; llm: EngineConfig | null };
}

/** A replay ready to estimate and run: the questions, and the engines before and after. */
export interface ReplayPlan {
  params: ReplayParams;
  questions: PastQuestion[];
  capped: boolean;
  before: Side;
  after: Side;
  beforeName: (q: PastQuestion) => string;
  afterName: (q: PastQuestion) => string;
  /** What the candidate knowledge base added, when it has the proposals. */
  proposals: { entries: number; phrasings: number; orphaned: number } | null;
  /** The knowledge base's entries as planned (the estimate's grounding sizes). */
  entries: Array<{ question: string; answer: string }>;
}

export interface ReplayResult {
  status: 'done' | 'cancelled';
  rows: ReplayRowView[];
  elapsedMs: number;
}

function missingEngine(name: string): Engine {
  return {
    name,
    answer: async (r): Promise<EngineAnswer> => ({ content: r.fallbackText, handoff: true, confidence: null, sources: [], cause: `engine "${name}" is not configured` }),
  };
}

/** Past questions answered offline twice, with nothing delivered and no conversation written. */
export function createReplay(deps: ReplayDeps) {
  const { store } = deps;
  const now = deps.now ?? (() => performance.now());

  /** `engines`: the configured engines, read when the run is planned. */
  function side(knowledge: ReturnType<typeof buildKbIndex>, threshold: number, systemPrompt: string | null, engines: ReadonlyMap<string, EngineRow>): Side {
    const built = new Map<string, { engine: Engine; llm: EngineConfig | null }>();
    return {
      engine(name) {
        let e = built.get(name);
        if (e) return e;
        if (name === BUILTIN_ENGINE) {
          e = { engine: createKbEngine(knowledge, { threshold, queryMessages: 3 }), llm: null };
        } else {
          const row = engines.get(name);
          if (!row) e = { engine: missingEngine(name), llm: null };
          else {
            const config = { ...row.config, systemPrompt: systemPrompt ?? row.config.systemPrompt ?? DEFAULT_SYSTEM_PROMPT };
            const { model } = config;
            // An engine answering from the knowledge base is replayed by words only: its vectors
            // live on the engine thread of a running serve, not here.
            if (config.answerFrom === 'kb' || model === undefined) e = { engine: createKbEngine(knowledge, { threshold, queryMessages: 3 }, { name }), llm: null };
            else e = { engine: createOpenAiEngine({ name, ...config, model, apiKey: row.apiKeySealed ? deps.openKey(row.apiKeySealed) : null }, { knowledge }), llm: { ...config, model } };
          }
        }
        built.set(name, e);
        return e;
      },
    };
  }

  const clientEngine = new Map<string, { engine: string; fallbackText: string }>();
  /** Reads the settings of the questions' clients not read yet (plan does, before anything asks settingsOf). */
  const readClients = async (clientIds: Iterable<string>): Promise<void> => {
    for (const clientId of new Set(clientIds)) {
      if (clientEngine.has(clientId)) continue;
      const c = await store.clients.get(clientId);
      clientEngine.set(clientId, { engine: c?.settings.engine ?? BUILTIN_ENGINE, fallbackText: c?.settings.fallbackText ?? deps.fallbackText });
    }
  };
  const settingsOf = (clientId: string): { engine: string; fallbackText: string } => clientEngine.get(clientId) ?? { engine: BUILTIN_ENGINE, fallbackText: deps.fallbackText };

  /**
   * The transcript as the engine saw it when the question came: the lines up to it, without the
   * answers that followed it (a reply to this very message sorts after it).
   */
  async function contextAt(q: PastQuestion): Promise<ContextLine[]> {
    const lines = await store.messages.context(q.conversationId, q.messageId, deps.contextLines + 20);
    const at = lines.findIndex((l) => l.kind === 'message' && l.id === q.messageId);
    return lines.slice(0, at + 1).slice(-deps.contextLines).map(toContextLine);
  }

  async function requestFor(q: PastQuestion): Promise<EngineRequest> {
    return {
      purpose: q.eventType === 'website_dialog' ? 'website' : q.assisted ? 'suggestion' : 'auto_reply',
      clientId: q.clientId,
      channel: q.channel,
      isGroup: q.isGroup,
      context: await contextAt(q),
      fallbackText: settingsOf(q.clientId).fallbackText,
    };
  }

  /** Checks the request and reads the questions; nothing is called yet. Throws ReplayInputError. */
  async function plan(input: ReplayRequest, at: number): Promise<ReplayPlan> {
    const parsed = replayRequestSchema.safeParse(input);
    if (!parsed.success) throw new ReplayInputError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    const r = parsed.data;
    const window = resolveWindow(r, at);
    if (r.clientId !== undefined && !(await store.clients.get(r.clientId))) throw new ReplayInputError(`no client "${r.clientId}"`);
    if (r.engine !== undefined && r.engine !== BUILTIN_ENGINE && !(await store.engines.get(r.engine))) {
      throw new ReplayInputError(`no engine "${r.engine}"; use "${BUILTIN_ENGINE}" or a configured one (engines list)`);
    }
    if (r.engine === BUILTIN_ENGINE && r.systemPrompt !== undefined) throw new ReplayInputError('--system-prompt is for an LLM engine; the built-in engine "kb" has none');
    if (r.engine !== undefined && r.engine !== BUILTIN_ENGINE && r.threshold !== undefined) {
      throw new ReplayInputError(`--threshold is the built-in engine's; engine "${r.engine}" is an LLM and has none`);
    }
    if (r.withProposals && !deps.pendingChanges) throw new ReplayInputError(NO_PROPOSALS);
    if (r.engine === undefined && r.threshold === undefined && r.systemPrompt === undefined && !r.withProposals) {
      throw new ReplayInputError('nothing to compare: choose a change to try (another engine, a threshold, a system prompt, or the pending proposals)');
    }
    const found = await store.replay.questions({ from: window.from, to: window.to, clientId: r.clientId ?? null, limit: r.limit + 1 });
    const questions = found.slice(0, r.limit);
    await readClients(questions.map((q) => q.clientId));
    const beforeName = (q: PastQuestion): string => settingsOf(q.clientId).engine;
    const afterName = (q: PastQuestion): string => r.engine ?? beforeName(q);
    if (r.systemPrompt !== undefined && r.engine === undefined && questions.length > 0 && questions.every((q) => afterName(q) === BUILTIN_ENGINE)) {
      throw new ReplayInputError('--system-prompt is for an LLM engine, and these questions are answered by the built-in one: add --engine NAME');
    }
    const current = await store.kb.all();
    const engines = new Map((await store.engines.list()).map((e) => [e.name, e]));
    const knowledge = buildKbIndex(current);
    const candidate = r.withProposals ? candidateKnowledge(current, await deps.pendingChanges!()) : null;
    // The threshold in force when the run is planned: both sides keep it for the whole run.
    const base = typeof deps.kbThreshold === 'function' ? deps.kbThreshold() : deps.kbThreshold;
    const params: ReplayParams = {
      ...window,
      since: r.since ?? null,
      clientId: r.clientId ?? null,
      engine: r.engine ?? null,
      threshold: r.threshold ?? null,
      systemPrompt: r.systemPrompt ?? null,
      withProposals: r.withProposals,
      concurrency: r.concurrency,
      limit: r.limit,
      baseThreshold: base,
    };
    return {
      params,
      questions,
      capped: found.length > r.limit,
      before: side(knowledge, base, null, engines),
      after: side(candidate?.index ?? knowledge, r.threshold ?? base, r.systemPrompt ?? null, engines),
      beforeName,
      afterName,
      proposals: candidate && { entries: candidate.entries, phrasings: candidate.phrasings, orphaned: candidate.orphaned },
      entries: current,
    };
  }

  async function estimate(p: ReplayPlan): Promise<ReplayEstimate> {
    const entries = p.entries;
    const entryTokens = entries.length === 0 ? 0 : entries.reduce((n, e) => n + estimateTokens(`Q: ${e.question}\nA: ${e.answer}`), 0) / entries.length;
    const calls: PlannedCall[] = [];
    for (const q of p.questions) {
      let request: EngineRequest | null = null;
      for (const [s, name] of [[p.before, p.beforeName(q)], [p.after, p.afterName(q)]] as const) {
        const { llm } = s.engine(name);
        if (!llm) continue;
        request ??= await requestFor(q);
        const promptTokens = promptTokensOf({
          systemPrompt: llm.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
          handoffMarker: llm.handoffMarker,
          groundingTokens: Math.round(entryTokens * Math.min(llm.groundingEntries, entries.length)),
          context: request.context,
          isGroup: q.isGroup,
          contextTokens: llm.contextTokens,
        });
        calls.push({ engine: name, promptTokens, maxTokens: llm.maxTokens });
      }
    }
    const latencies = new Map<string, { ms: number; measured: boolean }>();
    for (const name of new Set(calls.map((c) => c.engine))) {
      const measured = await store.replay.measuredLatency(name);
      latencies.set(name, measured !== null ? { ms: measured, measured: true } : { ms: Math.min((await store.engines.get(name))?.config.timeoutMs ?? deps.engineTimeoutMs, deps.engineTimeoutMs), measured: false });
    }
    return estimateReplay({
      from: p.params.from,
      to: p.params.to,
      questions: p.questions.length,
      capped: p.capped,
      calls,
      concurrency: p.params.concurrency,
      latency: (name) => latencies.get(name)!,
    });
  }

  /** One answer, bounded by the engine time-out and the run's cancel: a failure is a handoff with its cause. */
  async function answerOnce(s: Side, name: string, request: EngineRequest, cancel: AbortSignal): Promise<ReplayRowSide> {
    const { engine, llm } = s.engine(name);
    const controller = new AbortController();
    const stop = (): void => controller.abort(cancel.reason);
    cancel.addEventListener('abort', stop, { once: true });
    let cancelTimer = (): void => {};
    const started = now();
    try {
      const timeout = new Promise<never>((_, reject) => {
        cancelTimer = deps.clock.after(deps.engineTimeoutMs, () => {
          controller.abort();
          reject(new Error(`engine ${name} timed out: no answer within ${deps.engineTimeoutMs} ms`));
        });
      });
      const cancelled = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true }));
      const answer = await Promise.race([engine.answer({ ...request, budget: { clock: deps.clock, endsAt: deps.clock.now() + deps.engineTimeoutMs } }, controller.signal), timeout, cancelled]);
      return {
        handoff: answer.handoff,
        content: answer.content,
        score: answer.confidence,
        engine: name,
        cause: answer.cause ?? null,
        llm: llm !== null,
        ms: Math.round(now() - started),
        tokens: answer.usage ? { prompt: answer.usage.promptTokens, completion: answer.usage.completionTokens } : null,
      };
    } catch (error) {
      return { handoff: true, content: request.fallbackText, score: null, engine: name, cause: (error as Error).message, llm: llm !== null, ms: Math.round(now() - started), tokens: null };
    } finally {
      cancelTimer();
      cancel.removeEventListener('abort', stop);
    }
  }

  /**
   * Answers every question before and after, at most `concurrency` answers at once. A cancel stops
   * it: calls in flight are aborted, and the questions answered both ways are kept.
   */
  async function run(p: ReplayPlan, options: { signal: AbortSignal; onProgress?: (done: number, total: number) => void }): Promise<ReplayResult> {
    const started = now();
    const total = p.questions.length;
    // The question's request, read once for both sides (a promise: the two may start together).
    const requests = new Map<number, Promise<EngineRequest>>();
    const sides = new Map<number, { before?: ReplayRowSide; after?: ReplayRowSide }>();
    const rows: ReplayRowView[] = [];
    const tasks = p.questions.flatMap((q, i) => [
      { i, q, which: 'before' as const },
      { i, q, which: 'after' as const },
    ]);
    await runPool(tasks, p.params.concurrency, options.signal, async ({ i, q, which }) => {
      let pending = requests.get(i);
      if (!pending) requests.set(i, (pending = requestFor(q)));
      const request = await pending;
      const answered = await (which === 'before' ? answerOnce(p.before, p.beforeName(q), request, options.signal) : answerOnce(p.after, p.afterName(q), request, options.signal));
      if (options.signal.aborted) return;
      const got = sides.get(i) ?? {};
      got[which] = answered;
      sides.set(i, got);
      if (got.before && got.after) {
        requests.delete(i);
        rows.push({
          messageId: q.messageId,
          conversationId: q.conversationId,
          clientId: q.clientId,
          eventType: q.eventType,
          question: q.content,
          askedAt: q.receivedAt,
          before: got.before,
          after: got.after,
          change: changeOf(got.before, got.after),
        });
        options.onProgress?.(rows.length, total);
      }
    });
    rows.sort((a, b) => a.messageId - b.messageId);
    return { status: options.signal.aborted ? 'cancelled' : 'done', rows, elapsedMs: Math.round(now() - started) };
  }

  return { plan, estimate, run };
}

export type Replay = ReturnType<typeof createReplay>;
