import type { Channel, MessageRole } from '../../shared/conversation.ts';
import type { Clock } from '../../shared/clock.ts';

/** What a line quotes (message_type 2): who said it and what, as far as Switchboard knows. */
export interface ContextQuote {
  speaker: string | null;
  content: string;
}

/** One line of the conversation as an engine sees it: data only, no handles. */
export interface ContextLine {
  role: MessageRole;
  /** The speaker's name when known, else their id. */
  speaker: string | null;
  /** Set only when the speaker has a display name (a nickname, an operator's name), never an id. */
  speakerName?: string | null;
  content: string;
  at: number;
  quoted?: ContextQuote | null;
}

/** A transcript line as an engine reads it: only what was said, by whom, and what it quoted. */
export function toContextLine(e: ContextLine): ContextLine {
  const { role, speaker, speakerName, content, at, quoted } = e;
  return { role, speaker, ...(speakerName ? { speakerName } : {}), content, at, ...(quoted ? { quoted } : {}) };
}

/** Which transcript lines a request is about: `messages.context(conversationId, uptoId, lines)`. */
export interface ContextSource {
  conversationId: string;
  uptoId: number;
  lines: number;
}

export type EnginePurpose = 'auto_reply' | 'suggestion' | 'website';

export interface EngineRequest {
  purpose: EnginePurpose;
  /** Whose conversation it is: the router answers with that client's chosen engine. */
  clientId?: string;
  channel: Channel;
  isGroup: boolean;
  /** Oldest first; the last customer lines are what the answer must address. */
  context: ContextLine[];
  /**
   * Set (with `context` left empty) only for an engine that `readsContext`: the transcript lines
   * it reads itself, up to message `uptoId` (committed before the reply's timer was armed).
   */
  contextOf?: ContextSource;
  /** Said when the engine has no confident answer (client setting, else the server default). */
  fallbackText: string;
  /**
   * Suggestions asked for from the console: the agent's instruction for this answer ("shorter",
   * "offer a refund"). A generating engine adds it as a system line; the knowledge base ignores it.
   */
  instruction?: string;
  /** The caller's overall time budget, set by askEngine: no attempt or wait may run past it. */
  budget?: EngineBudget;
}

export interface EngineBudget {
  /** The caller's clock: time-outs and waits run on it, so tests move it by hand. */
  clock: Clock;
  /** When the caller gives up, on `clock`. */
  endsAt: number;
}

export interface EngineSource {
  id: number;
  score: number;
}

export interface EngineAnswer {
  content: string;
  /** No confident answer: a human should take this one. */
  handoff: boolean;
  /** 0..1 where the engine can tell; null otherwise. */
  confidence: number | null;
  sources: EngineSource[];
  /** Why the engine handed off, for the trace. */
  cause?: string;
  /** Which engine answered, when a router chose it. */
  engine?: string;
  /** Tokens the model's API reported (its `usage`), when it did: replays add them up. */
  usage?: EngineUsage;
}

export interface EngineUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface Engine {
  readonly name: string;
  answer(request: EngineRequest, signal: AbortSignal): Promise<EngineAnswer>;
  /** The engine that would answer this request, when this one only routes (for time-out messages). */
  nameFor?(request: EngineRequest): string;
  /** Reads a request's `contextOf` itself (the engine thread, on its own connection). */
  readonly readsContext?: boolean;
}
