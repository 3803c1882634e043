import type { AutoReplyState, Channel, MessageRole } from './conversation.ts';
import type { CommandLine } from './console-transcript.ts';

/**
 * The shapes the console's methods answer with: a conversation in the list, the admin views
 * (request log, clients, knowledge base, dashboard) and a delivery's state. Kept apart so that
 * console-api.ts stays the contract's index; it re-exports them.
 */

export interface ConversationPage {
  items: ConversationSummary[];
  nextCursor: string | null;
}

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
  /** When the last line is a command (a stop, a resume): what it was, where from and who, to preview it in words. */
  lastCommand?: CommandLine | null;
  /** When the last line is a reply: the bot's, or an operator's (with their name); `lastText` is what it said. */
  lastReply?: { by: 'bot' | 'operator'; operator: string | null } | null;
  /**
   * In Needs you: the customer's latest message (the last line is often the bot's fallback or an
   * undelivered reply); in a group, the latest that addressed the service, not members' chatter.
   */
  lastCustomerText?: string | null;
  /** Who said lastCustomerText, in a group (their latest name, else their id). */
  lastCustomerBy?: string | null;
  /** Who said the last line, when a person did: the list prefixes a group member's or a staff line with it. */
  lastSpeaker?: { role: MessageRole; id: string | null; name: string | null } | null;
  /** In a search's results: the matching message, cut to begin near the match (the list shows it in place of the last line). */
  matchText?: string | null;
  /** The customer's latest nickname (from_user_nickname, or to_user_nickname when staff or AI wrote to them); in a group, its latest speaker's. */
  customerName: string | null;
  /** The group's latest group_name, when the integrator sends one. */
  groupName: string | null;
  /**
   * Customer messages the caller has not seen (their own read marker; counted among the newest
   * UNREAD_WINDOW lines after it, and for an agent only those since their account was made).
   */
  unread: number;
  /** The account the conversation is assigned to (team workflow); null or absent: nobody has it. */
  assignee?: string | null;
  /** When needs_human was last set; null while it is clear. */
  needsHumanSince: number | null;
  /** Why it was last set (null before the service recorded reasons); stale once it is clear. */
  needsHumanReason: NeedsHumanReason | null;
  resolvedAt: number | null;
  /** Operator name of the last resolve. */
  resolvedBy: string | null;
}

/** Enough of a conversation to name it: the group's or the customer's name, and the ids agents quote. */
export type ConversationLabel = Pick<ConversationSummary, 'peer' | 'groupId' | 'groupName' | 'customerId' | 'customerName'>;

/** Why a conversation is in Needs you: the queue shows it on each row. */
export const NEEDS_HUMAN_REASONS = ['handoff', 'no_answer', 'delivery_failed', 'flagged', 'customer_waiting'] as const;
export type NeedsHumanReason = (typeof NEEDS_HUMAN_REASONS)[number];


/** A delivery as stored now; `nextAttemptAt` only while it is pending. */
export interface DeliveryNow {
  id: number;
  conversationId: string;
  state: 'pending' | 'sent' | 'dead' | 'cancelled';
  attempts: number;
  nextAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  /**
   * The last recorded try's own answer. The same as lastStatus and lastError, except for a try
   * recorded after a cancel: the delivery keeps its cancel reason, and this says how the try went.
   */
  lastTry: { status: number | null; error: string | null } | null;
}

export interface RequestLogItem {
  id: number;
  at: number;
  requestId: string;
  /**
   * Its signature was checked against the client's secret. An unverified request was refused
   * before or at authentication (unknown or disabled client, stale timestamp, bad signature, bad
   * JSON...): anyone could have sent it, so the client it named is only `claimedClientId`.
   */
  verified: boolean;
  /** The client of a verified request; null on an unverified one. */
  clientId: string | null;
  /** The client an unverified request named; null on a verified one. */
  claimedClientId: string | null;
  eventType: string | null;
  msgId: string | null;
  status: number;
  code: string | null;
  latencyMs: number;
  problem: Record<string, unknown> | null;
  /** The conversation the request stored into, for a link from the log. */
  conversationId: string | null;
  /** Who that conversation is with, named as the list names it. */
  conversation?: ConversationLabel | null;
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
  /** "Also asked as": other ways customers put the question. */
  phrasings: string[];
  updatedAt: number;
}

/** At one threshold, what labelled questions would get. */
export interface KbTradeOff {
  threshold: number;
  paraphrases: number;
  right: number;
  wrong: number;
  handedOff: number;
  uncovered: number;
  uncoveredAnswered: number;
}

/** The built-in engine's threshold against what it would answer (the knowledge-base view's plot). */
export interface KbCurve {
  /** The threshold in force: set from the console, else the server's kbThreshold. */
  threshold: number;
  /** The server's kbThreshold, which "back to the default" returns to. */
  defaultThreshold: number;
  /** Recent customer questions' best matches: the share answered at each threshold. */
  recent: { days: number; questions: number; answeredNow: number; points: Array<{ threshold: number; answered: number }> };
  /** A file of labelled questions, when one was given. */
  labelled: { fileName: string; questions: number; points: KbTradeOff[] } | null;
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
