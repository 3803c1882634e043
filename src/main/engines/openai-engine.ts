import type { Engine, EngineAnswer, EngineRequest, ContextLine, EngineUsage } from './engine.ts';
import { rankKnowledge, type KnowledgeSource } from './kb-engine.ts';
import { EngineTimeout } from './ask.ts';
import type { RankFn } from './embeddings/hybrid-rank.ts';
import { systemClock, type Clock } from '../../shared/clock.ts';

/** An OpenAI-compatible chat-completions endpoint (Ollama, llama.cpp server, vLLM, hosted APIs). */
export interface OpenAiEngineConfig {
  name: string;
  baseUrl: string;
  model: string;
  apiKey: string | null;
  systemPrompt: string;
  temperature: number;
  maxTokens: number;
  /** Per HTTP attempt, cut to what is left of the caller's overall budget. */
  timeoutMs: number;
  /** Budget for the conversation lines sent, newest kept. */
  contextTokens: number;
  /** The model says this when it cannot answer: the reply becomes a handoff. */
  handoffMarker: string;
  /** Knowledge-base entries put into the prompt. */
  groundingEntries: number;
  retries: number;
}

export const DEFAULT_SYSTEM_PROMPT =
  'You are a helpful, concise customer-support assistant. Answer in the language of the customer. ' +
  'Use the knowledge-base entries when they apply.';

/**
 * Added to every system prompt, custom ones included: a prompt without it would never hand off.
 * (A custom prompt may still say HANDOFF_MARKER; it is replaced by the marker.)
 */
export function handoffInstruction(marker: string): string {
  return `If you cannot answer confidently, reply with exactly ${marker} and nothing else.`;
}

export interface OpenAiDeps {
  knowledge: KnowledgeSource;
  /** Grounding's ranking when not the lexical one (an engine with an embedding model). */
  rank?: RankFn;
  /** Waits between retries; tests make it instant. Default: the caller's budget clock. */
  sleep?: (ms: number) => Promise<void>;
}

type ChatMessage = { role: 'system' | 'user' | 'assistant'; content: string };

/** Rough token estimate: about 4 Latin characters per token, one per CJK character. */
export function estimateTokens(text: string): number {
  let cjk = 0;
  for (const ch of text) if (/[\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff]/.test(ch)) cjk++;
  return cjk + Math.ceil((text.length - cjk) / 4) + 4;
}

/** A quoted message, as a chat app shows it above the reply: who said it and (the start of) what. */
function quoteText(line: ContextLine): string {
  if (!line.quoted) return '';
  const text = line.quoted.content.replace(/\s+/g, ' ').trim();
  const clipped = text.length > 300 ? `${text.slice(0, 299)}…` : text;
  return `[quoting ${line.quoted.speaker ? `${line.quoted.speaker}: ` : ''}"${clipped}"] `;
}

function lineText(line: ContextLine, isGroup: boolean): string {
  // In groups several people talk: each line names its speaker, by id when no name was sent. With
  // one customer only a real name helps the model (to address them); an id would be noise.
  const name = isGroup ? line.speaker : (line.speakerName ?? null);
  return `${name ? `${name}: ` : ''}${quoteText(line)}${line.content}`;
}

/** Newest lines that fit the budget, oldest first, as chat messages with roles. */
export function contextMessages(context: ContextLine[], isGroup: boolean, budget: number): ChatMessage[] {
  const out: ChatMessage[] = [];
  let used = 0;
  for (let i = context.length - 1; i >= 0; i--) {
    const line = context[i]!;
    if (line.role === 'command' || line.content.trim() === '') continue;
    const content = line.role === 'staff' ? `[staff${line.speaker ? ` ${line.speaker}` : ''}] ${quoteText(line)}${line.content}` : lineText(line, isGroup);
    const cost = estimateTokens(content);
    if (used + cost > budget && out.length > 0) break;
    used += cost;
    out.unshift({ role: line.role === 'customer' ? 'user' : 'assistant', content });
  }
  return out;
}

/** The API's own token count (`usage`), when it sent one with whole numbers. */
function usageOf(body: unknown): EngineUsage | null {
  const usage = (body as { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } }).usage;
  const prompt = usage?.prompt_tokens;
  const completion = usage?.completion_tokens;
  if (!Number.isInteger(prompt) || !Number.isInteger(completion)) return null;
  return { promptTokens: prompt as number, completionTokens: completion as number };
}

class AttemptError extends Error {
  readonly retryable: boolean;
  readonly retryAfterMs: number | null;
  readonly timedOut: boolean;
  constructor(message: string, retryable: boolean, retryAfterMs: number | null = null, timedOut = false) {
    super(message);
    this.retryable = retryable;
    this.retryAfterMs = retryAfterMs;
    this.timedOut = timedOut;
  }
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * Generated answers grounded in the knowledge base. Whatever goes wrong (time-out, 429 or 5xx
 * past the retries, a malformed answer, the model's own handoff marker), the result is a handoff
 * with its cause: a human takes over and the trace says why. The one exception is the caller's
 * overall budget running out (EngineTimeout), which the caller maps per scenario. Attempts and
 * back-off waits never run past that budget: the last attempt is cut to it, and a retry whose
 * wait would reach it is not made.
 */
export function createOpenAiEngine(config: OpenAiEngineConfig, deps: OpenAiDeps): Engine {
  const url = `${config.baseUrl.replace(/\/+$/, '')}/chat/completions`;

  async function attempt(messages: ChatMessage[], signal: AbortSignal, limitMs: number, clock: Clock): Promise<{ text: string; usage: EngineUsage | null }> {
    const timeout = new AbortController();
    const cancel = clock.after(limitMs, () => timeout.abort());
    const failed = (error: unknown, otherwise: AttemptError): AttemptError => {
      if (signal.aborted) throw error;
      return timeout.signal.aborted ? new AttemptError(`timed out, no answer within ${limitMs} ms`, true, null, true) : otherwise;
    };
    try {
      let res: Response;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}) },
          body: JSON.stringify({ model: config.model, messages, temperature: config.temperature, max_tokens: config.maxTokens, stream: false }),
          signal: AbortSignal.any([signal, timeout.signal]),
        });
      } catch (error) {
        throw failed(error, new AttemptError(`cannot reach ${config.baseUrl}: ${(error as Error).message}`, true));
      }
      if (res.status === 429 || res.status >= 500) {
        const after = Number(res.headers.get('retry-after'));
        await res.body?.cancel();
        throw new AttemptError(`HTTP ${res.status}`, true, Number.isFinite(after) && after > 0 ? Math.min(after * 1000, 10_000) : null);
      }
      if (!res.ok) {
        await res.body?.cancel();
        throw new AttemptError(`HTTP ${res.status} (check the model name, URL and key)`, false);
      }
      let body: unknown;
      try {
        body = await res.json();
      } catch (error) {
        throw failed(error, new AttemptError('malformed answer: not JSON', false));
      }
      const content = (body as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]?.message?.content;
      if (typeof content !== 'string') throw new AttemptError('malformed answer: no choices[0].message.content', false);
      return { text: content, usage: usageOf(body) };
    } finally {
      cancel();
    }
  }

  return {
    name: config.name,
    async answer(request: EngineRequest, signal: AbortSignal): Promise<EngineAnswer> {
      const customerLines = request.context.filter((l) => l.role === 'customer').slice(-3).reverse().map((l) => l.content);
      const { ranked: grounding, cause: rankCause } = deps.rank && config.groundingEntries > 0
        ? await deps.rank(customerLines, config.groundingEntries, signal, request.budget)
        : { ranked: rankKnowledge(deps.knowledge, customerLines, config.groundingEntries), cause: undefined };
      const system = [
        config.systemPrompt.replaceAll('HANDOFF_MARKER', config.handoffMarker),
        handoffInstruction(config.handoffMarker),
        ...(grounding.length
          ? ['Knowledge base:', ...grounding.map((g, i) => `[${i + 1}] Q: ${g.entry.question}\nA: ${g.entry.answer}`)]
          : []),
      ].join('\n\n');
      const messages: ChatMessage[] = [
        { role: 'system', content: system },
        ...contextMessages(request.context, request.isGroup, config.contextTokens),
        // Last, so it bears on this answer: what the agent asked for when requesting a suggestion.
        ...(request.instruction ? [{ role: 'system' as const, content: `Instruction from the support agent for this answer: ${request.instruction}` }] : []),
      ];
      const sources = grounding.map((g) => ({ id: g.entry.id, score: Math.round(g.score * 1000) / 1000 }));
      const note = rankCause ? `; grounding ${rankCause}` : '';
      const handoff = (cause: string): EngineAnswer => ({ content: request.fallbackText, handoff: true, confidence: null, sources, cause: cause + note });

      const budget = request.budget;
      const clock = budget?.clock ?? systemClock;
      const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => clock.after(ms, resolve)));
      const budgetMs = budget ? budget.endsAt - clock.now() : Number.POSITIVE_INFINITY;
      const left = (): number => (budget ? budget.endsAt - clock.now() : Number.POSITIVE_INFINITY);

      for (let i = 0; ; i++) {
        const remaining = left();
        // The attempt that would reach the end of the budget is cut there: its time-out is the caller's.
        const lastChance = remaining <= config.timeoutMs;
        try {
          const reply = await attempt(messages, signal, Math.max(0, Math.min(config.timeoutMs, remaining)), clock);
          const text = reply.text.trim();
          const usage = reply.usage ? { usage: reply.usage } : {};
          if (text === '' || text.includes(config.handoffMarker)) return { ...handoff(text === '' ? 'the model answered with nothing' : 'the model said it cannot answer'), ...usage };
          return { content: text, handoff: false, confidence: null, sources, ...usage, ...(rankCause ? { cause: `grounding ${rankCause}` } : {}) };
        } catch (error) {
          if (!(error instanceof AttemptError)) throw error;
          const tried = i > 0 ? ` after ${plural(i + 1, 'attempt')}` : '';
          if (error.timedOut && lastChance) {
            throw new EngineTimeout(config.name, `engine ${config.name} timed out: no answer within ${budgetMs} ms (${plural(i + 1, 'attempt')})`);
          }
          if (!error.retryable || i >= config.retries) return handoff(`engine ${config.name}: ${error.message}${tried}`);
          const wait = error.retryAfterMs ?? 500 * 2 ** i;
          if (wait >= left()) {
            return handoff(`engine ${config.name}: ${error.message}${tried}; a retry in ${wait} ms would not fit the ${budgetMs} ms engine budget`);
          }
          await sleep(wait);
          signal.throwIfAborted();
        }
      }
    },
  };
}
