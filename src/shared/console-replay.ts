import { z } from 'zod';

/**
 * Replays in the console API (issue 29, "proving a change before it goes live"): past customer
 * questions answered offline with the current configuration ("before") and a candidate ("after").
 * Inputs and outputs are spread into consoleInputs / ConsoleOutputs (console-api.ts); the CLI
 * (`eval replay`) keeps runs in the same shape.
 */

export const REPLAY_STATUSES = ['running', 'done', 'cancelled', 'failed'] as const;
export type ReplayStatus = (typeof REPLAY_STATUSES)[number];

/** How a question's outcome moved from before to after. */
export const REPLAY_CHANGES = ['same', 'now_answered', 'now_handoff', 'other_answer'] as const;
export type ReplayChange = (typeof REPLAY_CHANGES)[number];

export const REPLAY_LIMITS = { concurrencyMax: 16, concurrencyDefault: 2, questionsMax: 5000, questionsDefault: 1000, systemPromptMax: 20_000 } as const;

/** What an operator asks for: a window (`since` like "7d", or from/to in epoch ms), a scope and the candidate. */
export const replayRequestSchema = z.object({
  since: z.string().trim().max(16).optional(),
  from: z.number().int().nonnegative().optional(),
  to: z.number().int().nonnegative().optional(),
  clientId: z.string().min(1).max(128).optional(),
  /** A configured engine's name or "kb", answering every question after. */
  engine: z.string().min(1).max(64).optional(),
  /** The built-in engine's threshold after. */
  threshold: z.number().min(0).max(1).optional(),
  /** An LLM engine's system prompt after. */
  systemPrompt: z.string().trim().min(1).max(REPLAY_LIMITS.systemPromptMax).optional(),
  /** The knowledge base with the pending proposals after. */
  withProposals: z.boolean().default(false),
  concurrency: z.number().int().min(1).max(REPLAY_LIMITS.concurrencyMax).default(REPLAY_LIMITS.concurrencyDefault),
  limit: z.number().int().min(1).max(REPLAY_LIMITS.questionsMax).default(REPLAY_LIMITS.questionsDefault),
});
export type ReplayRequest = z.input<typeof replayRequestSchema>;

/** A run's parameters as kept: the window resolved, and what "before" was when it ran. */
export const replayParamsSchema = z.object({
  from: z.number(),
  to: z.number(),
  since: z.string().nullable(),
  clientId: z.string().nullable(),
  engine: z.string().nullable(),
  threshold: z.number().nullable(),
  systemPrompt: z.string().nullable(),
  withProposals: z.boolean(),
  concurrency: z.number().int(),
  limit: z.number().int(),
  /** The built-in engine's threshold before (the server's kbThreshold then). */
  baseThreshold: z.number(),
});
export type ReplayParams = z.infer<typeof replayParamsSchema>;

export const replayRowSideSchema = z.object({
  handoff: z.boolean(),
  content: z.string(),
  /** The engine's 0..1 confidence (the built-in engine's match score); null from an LLM. */
  score: z.number().nullable(),
  engine: z.string(),
  cause: z.string().nullable(),
  /** Whether this answer was an LLM call (counted, timed, its tokens added). */
  llm: z.boolean(),
  ms: z.number(),
  /** From the API's usage; null when it sent none (or no LLM was asked). */
  tokens: z.object({ prompt: z.number().int(), completion: z.number().int() }).nullable(),
});
export type ReplayRowSide = z.infer<typeof replayRowSideSchema>;

const sideTotals = z.object({
  answered: z.number().int(),
  handoff: z.number().int(),
  llmCalls: z.number().int(),
  /** LLM calls whose API reported usage: the token sums cover these. */
  callsWithUsage: z.number().int(),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  /** Summed over calls (not wall time). */
  llmMs: z.number(),
});
export type ReplaySideTotals = z.infer<typeof sideTotals>;

export const replayTotalsSchema = z.object({
  questions: z.number().int(),
  before: sideTotals,
  after: sideTotals,
  changed: z.object({ now_answered: z.number().int(), now_handoff: z.number().int(), other_answer: z.number().int() }),
  /** Wall time of the run. */
  elapsedMs: z.number(),
});
export type ReplayTotals = z.infer<typeof replayTotalsSchema>;

/** Shown before a run: what it will cost. */
export interface ReplayEstimate {
  from: number;
  to: number;
  questions: number;
  /** Questions of the window left out by the limit. */
  capped: boolean;
  llmCalls: number;
  /** Rough, from the text sent (system prompt, grounding, context): about 4 Latin characters or 1 CJK character a token. */
  promptTokens: number;
  /** The most the answers may use (each call's max tokens). */
  completionTokensMax: number;
  /** Rough wall time at the concurrency asked for. */
  seconds: number;
  /** measured: the engines' average latency in earlier runs; timeout: their time-out (an upper bound); none: no LLM call. */
  basis: 'measured' | 'timeout' | 'none';
  concurrency: number;
}

export interface ReplayRowView {
  messageId: number;
  conversationId: string;
  clientId: string;
  eventType: string;
  question: string;
  askedAt: number;
  before: ReplayRowSide;
  after: ReplayRowSide;
  change: ReplayChange;
}

export interface ReplayRunSummary {
  id: number;
  createdAt: number;
  finishedAt: number | null;
  status: ReplayStatus;
  startedBy: { id: string; name: string } | null;
  params: ReplayParams;
  totals: ReplayTotals | null;
  error: string | null;
  /** While it runs: questions answered both ways so far. */
  progress: { done: number; total: number } | null;
}

export const replayInputs = {
  /** What a replay would cost; nothing runs. */
  estimateReplay: replayRequestSchema,
  /** Starts a replay in the background (one at a time); follow it with getReplayRun. */
  startReplay: replayRequestSchema,
  getReplayRun: z.object({ id: z.number().int().positive(), changedOnly: z.boolean().default(true), limit: z.number().int().min(1).max(REPLAY_LIMITS.questionsMax).default(500) }),
  listReplayRuns: z.object({ limit: z.number().int().min(1).max(500).default(50) }),
  /** Stops a running replay: what was answered is kept, as cancelled. */
  cancelReplay: z.object({ id: z.number().int().positive() }),
} as const;

export interface ReplayOutputs {
  estimateReplay: ReplayEstimate;
  startReplay: { runId: number; estimate: ReplayEstimate };
  getReplayRun: ReplayRunSummary & { rows: ReplayRowView[] };
  listReplayRuns: ReplayRunSummary[];
  cancelReplay: { cancelled: boolean };
}
