import { z } from 'zod';
import { AUTO_REPLY_STATES, CHANNELS, type AutoReplyState } from './conversation.ts';
import {
  AUDIT_ACTIONS,
  CONVERSATION_VIEWS,
  DELIVERY_PROBLEM_STATES,
  DELIVERY_VIEW_STATES,
  operatorSchema,
  type AuditItem,
  type CannedReply,
  type DeliveryItem,
  type Operator,
  type SendTarget,
} from './console-workspace.ts';
import { decodeCursor } from './list-cursor.ts';
import type { TranscriptEntry } from './console-transcript.ts';
import type { Caller, Role } from './console-roles.ts';
import type { ClientView, ConversationLabel, ConversationPage, ConversationSummary, DashboardStats, DeliveryNow, KbCurve, KbEntryView, RequestLogItem } from './console-views.ts';
import { accountInputs, type AccountOutputs } from './console-accounts.ts';
import { ASSIGNMENTS, draftBaseSchema, teamInputs, type ArrivedEntry, type TeamEvent, type TeamOutputs } from './console-team.ts';
import { learnInputs, type LearnEvent, type LearnOutputs } from './console-learn.ts';
import { replayInputs, type ReplayOutputs } from './console-replay.ts';

export * from './console-workspace.ts';
export * from './console-transcript.ts';
export * from './console-accounts.ts';
export * from './console-team.ts';
export * from './console-views.ts';
export * from './console-learn.ts';
export * from './console-replay.ts';

/**
 * The one contract between the console (renderer) and the service (main). Each method has an
 * input schema, checked where the call enters main (IPC or HTTP), and an output type. The main
 * side's handler object `satisfies ConsoleHandlers`; the preload and browser bridges are derived
 * from METHOD_NAMES. Errors cross as data, never as exceptions.
 */

/** A caller's unread count looks this many lines back from their read marker at most. */
export const UNREAD_WINDOW = 200;

/** The most conversations one listConversations call returns. */
export const LIST_PAGE_MAX = 200;


/** `arrived`: on conversation_changed (409), what came after the draft's base; nothing was sent. */
export type ApiError = { code: string; message: string; arrived?: ArrivedEntry[] };

/**
 * Why undoResolve changed nothing; the error code is `undo_<reason>`. Each is a refusal, not a
 * silent no-op: the agent pressed Undo to get a waiting customer back in the queue, and must know
 * when that did not happen.
 */
export const UNDO_RESOLVE_REFUSALS = ['expired', 'unavailable', 'already_undone', 'needs_you_again', 'resolved_again', 'changed'] as const;
export type UndoResolveRefusal = (typeof UNDO_RESOLVE_REFUSALS)[number];

/**
 * What an Undo of a stop (resumeAutoReply with undoStop) did. Only `undone` changed anything; the
 * others are refusals that leave the conversation as it is, said to the agent: `already_undone` (a
 * resume or Undo came after the stop), `stopped_elsewhere` (the integration's own stop_auto_reply
 * came after it and holds), `was_stopped` (that stop found auto-reply already stopped),
 * `expired` (more than 15 s after the stop: `r` resumes), `not_stopped` (no console stop to take
 * back). Not errors: the conversation is in a known state either way.
 */
export type UndoStopOutcome = 'undone' | 'already_undone' | 'stopped_elsewhere' | 'was_stopped' | 'expired' | 'not_stopped';
export type ApiResult<T> = { ok: true; value: T } | { ok: false; error: ApiError };

export const CONVERSATION_FILTERS = [...AUTO_REPLY_STATES, 'needs_human'] as const;

export const consoleInputs = {
  status: z.object({}),
  /** Who the console is signed in as: the owner (desktop window, console token) or an agent's session. */
  whoAmI: z.object({}),
  /** Ends the caller's session (team mode); the owner's console token is not a session and stays. */
  signOut: z.object({}),
  listConversations: z.object({
    clientId: z.string().max(128).optional(),
    channel: z.enum(CHANNELS).optional(),
    state: z.enum(CONVERSATION_FILTERS).optional(),
    /** Also matches customer ids, nicknames and group ids, not only message text. */
    search: z.string().max(200).optional(),
    /** needs_you: conversations flagged needs_human, longest wait first. */
    view: z.enum(CONVERSATION_VIEWS).default('all'),
    /** Team mode: the caller's own conversations, those nobody has, or all. */
    assignment: z.enum(ASSIGNMENTS).optional(),
    limit: z.number().int().min(1).max(LIST_PAGE_MAX).default(100),
    /** The previous page's nextCursor; absent for the first page. */
    cursor: z
      .string()
      .max(512)
      .transform((text, ctx) => {
        const cursor = decodeCursor(text);
        if (!cursor) ctx.addIssue({ code: 'custom', message: 'not a cursor from listConversations; ask for the first page without one' });
        return cursor;
      })
      .optional(),
  }).superRefine((input, ctx) => {
    const fits = input.cursor === undefined || input.cursor.k === (input.view === 'needs_you' ? 'needs' : 'recent') || (input.cursor.k === 'match' && !!input.search);
    if (!fits) ctx.addIssue({ code: 'custom', path: ['cursor'], message: 'this cursor belongs to another list (view or search changed); ask for the first page without one' });
  }),
  getTranscript: z.object({
    conversationId: z.string().min(1).max(64),
    limit: z.number().int().min(1).max(10_000).default(100),
    /** Older page: entries before this message id. */
    beforeId: z.number().int().positive().optional(),
  }),
  /** One stored message's whole message_info, as received: a transcript entry carries only what it shows. */
  getMessageInfo: z.object({ messageId: z.number().int().positive() }),
  /** Just these conversations, for merging live updates into a loaded list. */
  getConversations: z.object({ ids: z.array(z.string().min(1).max(64)).max(1000) }),
  stopAutoReply: z.object({ conversationId: z.string().min(1).max(64) }),
  resumeAutoReply: z.object({
    conversationId: z.string().min(1).max(64),
    /** Undo of a stop just made: its cancelled replies go back to the outbox (within UNDO_STOP_MS of the stop). */
    undoStop: z.boolean().default(false),
  }),
  listRequests: z.object({
    onlyFailed: z.boolean().default(false),
    requestId: z.string().max(128).optional(),
    msgId: z.string().max(128).optional(),
    /** That client's verified requests (their signature checked), unless `withClaims`. */
    clientId: z.string().max(128).optional(),
    /** With clientId: also the unverified requests that only named that client (anyone can send those). */
    withClaims: z.boolean().optional(),
    /** Epoch ms bounds on the request time. */
    since: z.number().int().nonnegative().optional(),
    until: z.number().int().nonnegative().optional(),
    limit: z.number().int().min(1).max(5000).default(200),
  }),
  retryDelivery: z.object({ deliveryId: z.number().int().positive() }),
  /**
   * A suggestion for the conversation's latest customer message, with an optional instruction from
   * the agent (stored with the suggestion). It never writes a customer message.
   */
  assist: z.object({ conversationId: z.string().min(1).max(64), instruction: z.string().trim().max(2000).optional() }),
  getOperator: z.object({}),
  setOperator: operatorSchema,
  /** An operator reply (protocol section 7): a staff message delivered through the outbox. */
  sendReply: z.object({
    conversationId: z.string().min(1).max(64),
    content: z.string().trim().min(1, 'write a reply').max(20_000).refine((s) => !s.includes('\u0000'), 'a reply cannot contain the NUL character'),
    /** The customer messages it answers; default: those since the last answer. */
    replyTo: z.array(z.string().min(1).max(128)).max(100).optional(),
    /** The draft's base (team workflow): refused with conversation_changed if a customer or a colleague spoke since, unless `force`. */
    base: draftBaseSchema.optional(),
    force: z.boolean().optional(),
  }),
  /** Clears needs_human, recording who and when. */
  resolveConversation: z.object({ conversationId: z.string().min(1).max(64) }),
  /**
   * Undo of a Resolve just made: back in Needs you with the wait it had. `resolvedAt` is that
   * Resolve's answer: it names the Resolve to take back, so a colleague's later one never is.
   */
  undoResolve: z.object({ conversationId: z.string().min(1).max(64), resolvedAt: z.number().int().nonnegative() }),
  /**
   * "Needs a human" by hand: into Needs you at the end of the queue, with a transcript line naming
   * the operator and the note. Already in Needs you, it keeps its place and nothing is written.
   */
  flagConversation: z.object({ conversationId: z.string().min(1).max(64), note: z.string().trim().max(500).optional() }),
  /** The operator has seen the conversation up to this message id. */
  markRead: z.object({ conversationId: z.string().min(1).max(64), upToId: z.number().int().nonnegative() }),
  listCanned: z.object({ search: z.string().max(200).optional() }),
  saveCanned: z.object({ id: z.number().int().positive().optional(), title: z.string().trim().min(1).max(200), content: z.string().trim().min(1).max(20_000) }),
  removeCanned: z.object({ id: z.number().int().positive() }),
  /** Deliveries that need attention, across conversations. */
  listDeliveries: z.object({
    clientId: z.string().max(128).optional(),
    states: z.array(z.enum(DELIVERY_VIEW_STATES)).min(1).default([...DELIVERY_PROBLEM_STATES]),
    limit: z.number().int().min(1).max(5000).default(500),
  }),
  /**
   * These deliveries, or (without ids) every dead one, of one client or all. A dead one starts a
   * fresh retry schedule; a retrying one is tried now ("Retry now"), as its next attempt, its
   * schedule carrying on from there. Named ones must be dead or retrying (else wrong_state).
   */
  retryDeliveries: z.object({ ids: z.array(z.number().int().positive()).max(5000).optional(), clientId: z.string().max(128).optional() }),
  /** A retrying or dead delivery is never sent: cancelled, naming the operator; the conversation's later deliveries go. */
  cancelDelivery: z.object({ deliveryId: z.number().int().positive() }),
  /** Where these deliveries stand now: how a retry turned out. */
  getDeliveries: z.object({ ids: z.array(z.number().int().positive()).max(1000) }),
  /** Who did what, newest first; each filter narrows (an admin's audit view: by agent, conversation, action). */
  listAudit: z.object({
    conversationId: z.string().max(64).optional(),
    operatorId: z.string().max(64).optional(),
    action: z.enum(AUDIT_ACTIONS).optional(),
    limit: z.number().int().min(1).max(5000).default(200),
  }),
  /** First run and "Integrate": a real signed website_dialog to the endpoint, as an integrator sends it. */
  sendTestMessage: z.object({
    clientId: z.string().min(1).max(128),
    content: z.string().trim().min(1).max(2000).default('Hello! This is a test message from the Switchboard console.'),
  }),
  listClients: z.object({}),
  addClient: z.object({ id: z.string().min(1).max(128), settings: z.record(z.string(), z.unknown()).default({}) }),
  rotateClient: z.object({ id: z.string().min(1).max(128), retirePrevious: z.boolean().default(false) }),
  setClientEnabled: z.object({ id: z.string().min(1).max(128), enabled: z.boolean() }),
  updateClientSettings: z.object({ id: z.string().min(1).max(128), settings: z.record(z.string(), z.unknown()) }),
  listKb: z.object({ search: z.string().max(200).optional(), limit: z.number().int().min(1).max(10_000).default(500) }),
  saveKb: z.object({
    id: z.number().int().positive().optional(),
    question: z.string().trim().min(1).max(2000),
    answer: z.string().trim().min(1).max(20_000),
    /** Left out when editing: the entry keeps its phrasings. */
    phrasings: z.array(z.string().trim().min(1).max(2000)).max(100).optional(),
  }),
  removeKb: z.object({ id: z.number().int().positive() }),
  importKb: z.object({ fileName: z.string().min(1).max(256), text: z.string().max(10 * 1024 * 1024) }),
  tryKb: z.object({ question: z.string().trim().min(1).max(2000) }),
  /** The built-in engine's threshold for every client from now on; null: back to the server's kbThreshold. */
  setKbThreshold: z.object({ threshold: z.number().min(0).max(1).multipleOf(0.01).nullable() }),
  /** The threshold's trade-off: recent customer questions, and optionally a file of labelled ones. */
  kbCurve: z.object({
    days: z.number().int().min(1).max(90).default(7),
    labelled: z.object({ fileName: z.string().min(1).max(256), text: z.string().max(2 * 1024 * 1024) }).optional(),
  }),
  stats: z.object({ minutes: z.number().int().min(5).max(24 * 60).default(60) }),
  listEngines: z.object({}),
  ...accountInputs,
  ...teamInputs,
  ...learnInputs,
  ...replayInputs,
} as const;

export type ConsoleMethod = keyof typeof consoleInputs;
export const METHOD_NAMES = Object.keys(consoleInputs) as ConsoleMethod[];
export type ConsoleInput<M extends ConsoleMethod> = z.input<(typeof consoleInputs)[M]>;
export type ParsedInput<M extends ConsoleMethod> = z.output<(typeof consoleInputs)[M]>;

export interface ConsoleOutputs extends AccountOutputs, TeamOutputs, LearnOutputs, ReplayOutputs {
  status: { endpoint: string; version: string };
  /** `account` is null only for an owner who has not said who they are yet. */
  whoAmI: { account: Operator | null; role: Role; owner: boolean };
  signOut: { signedOut: boolean };
  /** One page; nextCursor is null on the last. */
  listConversations: ConversationPage;
  /** mediaOrigins: the conversation's client's setting, so the console knows which attachments load without a click. */
  getTranscript: { conversation: ConversationSummary; entries: TranscriptEntry[]; hasEarlier: boolean; mediaOrigins: string[]; sendTarget: SendTarget };
  /** `json`: the stored text as it is (UTF-8 `bytes` long); `conversationId`: the message's conversation. */
  getMessageInfo: { messageId: number; conversationId: string; bytes: number; json: string };
  getConversations: ConversationSummary[];
  stopAutoReply: { previous: AutoReplyState; cancelledReplies: number };
  resumeAutoReply: { previous: AutoReplyState; restoredReplies: number; undo?: UndoStopOutcome };
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
  getOperator: Operator | null;
  setOperator: Operator;
  sendReply: { msgId: string; deliveryId: number };
  /** `undoable`: it took the conversation out of Needs you, so undoResolve can put it back. */
  resolveConversation: { resolvedAt: number; resolvedBy: Operator; undoable: boolean };
  /** What the conversation is back to: the wait it had, and the resolve before the one undone. */
  undoResolve: { needsHumanSince: number; resolvedAt: number | null; resolvedBy: string | null };
  /** `alreadyFlagged`: it was in Needs you before, and keeps its wait (needsHumanSince). */
  flagConversation: { needsHumanSince: number; alreadyFlagged: boolean };
  markRead: { unread: number };
  listCanned: CannedReply[];
  saveCanned: CannedReply;
  removeCanned: { removed: boolean };
  listDeliveries: DeliveryItem[];
  /** `deliveries`: those retried, with their attempt count then: the next attempt is the retry's result (see getDeliveries). */
  retryDeliveries: { retried: number; deliveries: Array<{ id: number; attempts: number }> };
  /**
   * `reason`: as stored and shown, "cancelled by <operator> from the console". `tryOnTheWire`: a try
   * had already gone out and cannot be called back; the receiver may get it once more. `attempts`:
   * those recorded before the cancel, so that try, when it is recorded, is the next one (see getDeliveries).
   */
  cancelDelivery: { reason: string; tryOnTheWire: boolean; attempts: number };
  getDeliveries: DeliveryNow[];
  listAudit: AuditItem[];
  /** The endpoint's whole answer to a real signed website_dialog (the secret never leaves main). */
  sendTestMessage: {
    endpoint: string;
    status: number;
    requestId: string | null;
    latencyMs: number;
    /** Response headers, without the connection ones (date, keep-alive...). */
    headers: Record<string, string>;
    body: unknown;
    /** The message_info that was signed and sent. */
    sent: Record<string, unknown>;
    /** How the reply came about, from the stored reply (the body has no cause); null unless a 200 with a reply. */
    answer: {
      handoff: boolean;
      engine: string | null;
      cause: string | null;
      confidence: number | null;
      sources: Array<{ id: number; score: number; question?: string }>;
    } | null;
  };
  tryKb: { content: string; handoff: boolean; confidence: number | null; sources: Array<{ id: number; score: number; question: string }>; cause: string | null };
  kbCurve: KbCurve;
  setKbThreshold: { threshold: number; defaultThreshold: number };
}

/** Main's side: each handler gets its checked input and who is calling (roles already checked by dispatch). */
export type ConsoleHandlers = { [M in ConsoleMethod]: (input: ParsedInput<M>, caller: Caller) => Promise<ConsoleOutputs[M]> };
export type ConsoleClient = { [M in ConsoleMethod]: (input: ConsoleInput<M>) => Promise<ApiResult<ConsoleOutputs[M]>> };

/** Live events pushed to every open console. */
export type ConsoleEvent =
  | TeamEvent
  | LearnEvent
  | { type: 'conversation'; conversationId: string }
  | { type: 'request'; status: number; code: string | null }
  | { type: 'delivery'; conversationId: string; state: string }
  /**
   * Events may have been missed (this node lost its link to the other nodes' events for a while):
   * the console loads its list, transcript and team again, as after its own stream dropped.
   */
  | { type: 'resync' }
  /**
   * A conversation newly needs a human: a handoff, a delivery that gave up, a customer who wrote
   * while a human has the conversation (auto-reply stopped or paused), or flagged. The console
   * alerts the operator.
   */
  | {
      type: 'alert';
      conversationId: string;
      reason: 'needs_human' | 'handoff' | 'delivery_failed' | 'customer_waiting' | 'staff_silent';
      /** One English sentence (the desktop app's notification, logs). */
      text: string;
      /** What the customer last said, as they said it (null: nothing yet): the console words the rest in its own language. */
      said: string | null;
      /** In a group: the member who said it (their latest name, else their id). */
      saidBy?: string;
      /** Who it is, as the console titles the conversation (a console that has not listed it yet still names it). */
      who?: ConversationLabel;
      /** Team mode: only these accounts' consoles get it (its assignee, or the queue's watchers); absent: every console. */
      recipients?: string[];
    };

/** Builds a client from a transport: the preload (IPC) and the browser (HTTP) bridges are both this. */
export function createConsoleClient(call: (method: ConsoleMethod, input: unknown) => Promise<ApiResult<unknown>>): ConsoleClient {
  return Object.fromEntries(METHOD_NAMES.map((m) => [m, (input: unknown) => call(m, input)])) as ConsoleClient;
}
