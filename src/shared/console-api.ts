import { z } from 'zod';
import { AUTO_REPLY_STATES, CHANNELS, type AutoReplyState, type Channel, type MessageRole, type ReplyReason } from './conversation.ts';

/**
 * The one contract between the console (renderer) and the service (main). Each method has an
 * input schema, checked where the call enters main (IPC or HTTP), and an output type. The main
 * side's handler object `satisfies ConsoleHandlers`; the preload and browser bridges are derived
 * from METHOD_NAMES. Errors cross as data, never as exceptions.
 */

export type ApiError = { code: string; message: string };
export type ApiResult<T> = { ok: true; value: T } | { ok: false; error: ApiError };

export const CONVERSATION_FILTERS = [...AUTO_REPLY_STATES, 'needs_human'] as const;

export const consoleInputs = {
  status: z.object({}),
  listConversations: z.object({
    clientId: z.string().max(128).optional(),
    channel: z.enum(CHANNELS).optional(),
    state: z.enum(CONVERSATION_FILTERS).optional(),
    search: z.string().max(200).optional(),
    limit: z.number().int().min(1).max(20_000).default(500),
  }),
  getTranscript: z.object({
    conversationId: z.string().min(1).max(64),
    limit: z.number().int().min(1).max(10_000).default(100),
    /** Older page: entries before this message id. */
    beforeId: z.number().int().positive().optional(),
  }),
  /** Just these conversations, for merging live updates into a loaded list. */
  getConversations: z.object({ ids: z.array(z.string().min(1).max(64)).max(1000) }),
  stopAutoReply: z.object({ conversationId: z.string().min(1).max(64) }),
  resumeAutoReply: z.object({ conversationId: z.string().min(1).max(64) }),
  listRequests: z.object({ onlyFailed: z.boolean().default(false), limit: z.number().int().min(1).max(5000).default(200) }),
  retryDelivery: z.object({ deliveryId: z.number().int().positive() }),
  /** assist_dialog from the console: on a picked customer message (its msg_id) or composed text. */
  assist: z
    .object({ conversationId: z.string().min(1).max(64), msgId: z.string().min(1).max(128).optional(), content: z.string().max(20_000).optional() })
    .refine((v) => v.msgId !== undefined || (v.content ?? '').trim() !== '', { message: 'pick a message or write a question' }),
  listClients: z.object({}),
  addClient: z.object({ id: z.string().min(1).max(128), settings: z.record(z.string(), z.unknown()).default({}) }),
  rotateClient: z.object({ id: z.string().min(1).max(128), retirePrevious: z.boolean().default(false) }),
  setClientEnabled: z.object({ id: z.string().min(1).max(128), enabled: z.boolean() }),
  updateClientSettings: z.object({ id: z.string().min(1).max(128), settings: z.record(z.string(), z.unknown()) }),
  listKb: z.object({ search: z.string().max(200).optional(), limit: z.number().int().min(1).max(10_000).default(500) }),
  saveKb: z.object({ id: z.number().int().positive().optional(), question: z.string().trim().min(1).max(2000), answer: z.string().trim().min(1).max(20_000) }),
  removeKb: z.object({ id: z.number().int().positive() }),
  importKb: z.object({ fileName: z.string().min(1).max(256), text: z.string().max(10 * 1024 * 1024) }),
  tryKb: z.object({ question: z.string().trim().min(1).max(2000) }),
  stats: z.object({ minutes: z.number().int().min(5).max(24 * 60).default(60) }),
  listEngines: z.object({}),
} as const;

export type ConsoleMethod = keyof typeof consoleInputs;
export const METHOD_NAMES = Object.keys(consoleInputs) as ConsoleMethod[];
export type ConsoleInput<M extends ConsoleMethod> = z.input<(typeof consoleInputs)[M]>;
export type ParsedInput<M extends ConsoleMethod> = z.output<(typeof consoleInputs)[M]>;

export interface ConversationSummary {
  id: string;
  clientId: string;
  channel: Channel;
  peer: string;
  groupId: string | null;
  customerId: string | null;
  autoReply: AutoReplyState;
  pausedUntil: number | null;
  needsHuman: boolean;
  messageCount: number;
  lastMessageAt: number;
  lastText: string | null;
}

/** One line of a conversation: what engines read as context and the console shows. */
export interface TranscriptLine {
  kind: 'message' | 'reply' | 'suggestion';
  id: number;
  msgId: string;
  role: MessageRole;
  speaker: string | null;
  content: string;
  at: number;
}

export interface TranscriptEntry extends TranscriptLine {
  /** Customer messages: why the service did or did not answer. */
  decision?: { scheduled: boolean; reason: ReplyReason; outcome: string | null; note: string | null } | null;
  /** Replies: engine outcome and delivery state. */
  handoff?: boolean;
  confidence?: number | null;
  cause?: string | null;
  /** Knowledge-base entries the answer used, with their scores. */
  sources?: Array<{ id: number; score: number }>;
  engine?: string;
  delivery?: { id: number; state: string; attempts: number; lastError: string | null } | null;
  messageInfo?: Record<string, unknown>;
}

export interface RequestLogItem {
  id: number;
  at: number;
  requestId: string;
  clientId: string | null;
  eventType: string | null;
  msgId: string | null;
  status: number;
  code: string | null;
  latencyMs: number;
  problem: Record<string, unknown> | null;
  /** Requests the row stands for: more than 1 for repeated refusals counted together, until `lastAt`. */
  count: number;
  lastAt: number;
}

export interface ClientView {
  id: string;
  enabled: boolean;
  settings: Record<string, unknown>;
  /** Active secrets by their last characters; the secret itself is shown once, when made. */
  secrets: Array<{ hint: string; createdAt: number }>;
  createdAt: number;
}

export interface KbEntryView {
  id: number;
  question: string;
  answer: string;
  updatedAt: number;
}

/** Per-minute series for the dashboard; every array has one value per minute in `minutes`. */
export interface DashboardStats {
  minutes: number[];
  requests: number[];
  rejected: number[];
  replies: number[];
  handoffs: number[];
  deliveryFailures: number[];
  /** Sampled every 15 s; [time, pending] pairs. */
  outboxDepth: Array<[number, number]>;
  now: { pending: number; dead: number; needsHuman: number };
}

export interface ConsoleOutputs {
  status: { endpoint: string; version: string };
  listConversations: ConversationSummary[];
  /** mediaOrigins: the conversation's client's setting, so the console knows which attachments load without a click. */
  getTranscript: { conversation: ConversationSummary; entries: TranscriptEntry[]; hasEarlier: boolean; mediaOrigins: string[] };
  getConversations: ConversationSummary[];
  stopAutoReply: { previous: AutoReplyState; cancelledReplies: number };
  resumeAutoReply: { previous: AutoReplyState };
  listRequests: RequestLogItem[];
  retryDelivery: { retried: boolean };
  assist: { msgId: string; suggestion: { msgId: string; content: string; handoff: boolean }; context: { reused: boolean; matchedBy: string | null; messages: number } };
  listClients: ClientView[];
  addClient: { id: string; secret: string };
  rotateClient: { id: string; secret: string; retired: number };
  setClientEnabled: ClientView;
  updateClientSettings: ClientView;
  listKb: KbEntryView[];
  saveKb: KbEntryView;
  removeKb: { removed: boolean };
  importKb: { imported: number };
  stats: DashboardStats;
  /** Configured engines; an API key is only ever reported as set or not. */
  listEngines: Array<{ name: string; model: string | null; baseUrl: string | null; hasKey: boolean }>;
  tryKb: { content: string; handoff: boolean; confidence: number | null; sources: Array<{ id: number; score: number; question: string }>; cause: string | null };
}

export type ConsoleHandlers = { [M in ConsoleMethod]: (input: ParsedInput<M>) => Promise<ConsoleOutputs[M]> };
export type ConsoleClient = { [M in ConsoleMethod]: (input: ConsoleInput<M>) => Promise<ApiResult<ConsoleOutputs[M]>> };

/** Live events pushed to every open console. */
export type ConsoleEvent =
  | { type: 'conversation'; conversationId: string }
  | { type: 'request'; status: number; code: string | null }
  | { type: 'delivery'; conversationId: string; state: string };

/** Builds a client from a transport: the preload (IPC) and the browser (HTTP) bridges are both this. */
export function createConsoleClient(call: (method: ConsoleMethod, input: unknown) => Promise<ApiResult<unknown>>): ConsoleClient {
  return Object.fromEntries(METHOD_NAMES.map((m) => [m, (input: unknown) => call(m, input)])) as ConsoleClient;
}
