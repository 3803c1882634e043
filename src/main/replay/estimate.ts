import type { ReplayEstimate } from '../../shared/console-replay.ts';
import type { ContextLine } from '../engines/engine.ts';
import { contextMessages, estimateTokens, handoffInstruction } from '../engines/openai-engine.ts';

/** One LLM call a replay will make, as far as can be told before making it. */
export interface PlannedCall {
  engine: string;
  promptTokens: number;
  maxTokens: number;
}

/** What the prompt of one call will hold: the system prompt, the grounding entries and the context lines that fit. */
export function promptTokensOf(call: { systemPrompt: string; handoffMarker: string; groundingTokens: number; context: ContextLine[]; isGroup: boolean; contextTokens: number }): number {
  const lines = contextMessages(call.context, call.isGroup, call.contextTokens);
  return estimateTokens(call.systemPrompt) + estimateTokens(handoffInstruction(call.handoffMarker)) + call.groundingTokens + lines.reduce((n, m) => n + estimateTokens(m.content), 0);
}

/**
 * Calls, tokens and time. Time: each engine's calls at its latency (measured in earlier replays,
 * else its time-out, an upper bound), spread over `concurrency` calls at once.
 */
export function estimateReplay(input: {
  from: number;
  to: number;
  questions: number;
  capped: boolean;
  calls: readonly PlannedCall[];
  concurrency: number;
  latency: (engine: string) => { ms: number; measured: boolean };
}): ReplayEstimate {
  let promptTokens = 0;
  let completionTokensMax = 0;
  let callMs = 0;
  let allMeasured = true;
  const latencies = new Map<string, { ms: number; measured: boolean }>();
  for (const c of input.calls) {
    promptTokens += c.promptTokens;
    completionTokensMax += c.maxTokens;
    let l = latencies.get(c.engine);
    if (!l) latencies.set(c.engine, (l = input.latency(c.engine)));
    callMs += l.ms;
    allMeasured &&= l.measured;
  }
  const seconds = input.calls.length === 0 ? 0 : Math.ceil(callMs / Math.min(input.concurrency, input.calls.length) / 1000);
  return {
    from: input.from,
    to: input.to,
    questions: input.questions,
    capped: input.capped,
    llmCalls: input.calls.length,
    promptTokens,
    completionTokensMax,
    seconds,
    basis: input.calls.length === 0 ? 'none' : allMeasured ? 'measured' : 'timeout',
    concurrency: input.concurrency,
  };
}
